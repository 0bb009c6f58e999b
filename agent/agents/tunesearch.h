#pragma once

#include "agents/agentcontext.h"
#include "agents/tunespace.h"

#include <QSet>
#include <QString>
#include <QVector>

#include <limits>
#include <utility>

namespace ak {

// One TuneAgent proposal's search (docs/agents.md, "Tune agent"), as steps that each propose only
// while nothing has been found: jumps (another kernel's best, a remembered or prior configuration),
// then coordinate descent (descend), then a random restart (restart). It holds what every step
// shares: the space, the current configuration, what the history shows was tried (never proposed
// again) and the device's shared memory (a tile that does not fit is never proposed). One object per
// propose() call: it keeps nothing between calls, so the agent stays a function of its context.
class TuneSearch
{
public:
    // The score of a failed or incorrect experiment (TuneAgent::score): below every measured one.
    static constexpr double kFailed = -std::numeric_limits<double>::infinity();

    // A configuration the history shows was tried, with its score (TuneAgent::score).
    struct Tried
    {
        TuneConfig config;
        double score;
        const Experiment *experiment;
    };

    // `context` gives the device and the kernel's record (shared memory fit); it must outlive this.
    TuneSearch(
        const AgentContext &context, const TuneSpace &space, const TuneConfig &current, QVector<Tried> tried);

    // Proposes the configuration `current` with `partial`'s constants, once: false when a
    // configuration with those constants was tried (whatever the others were), or one was found.
    bool jump(const TuneConfig &partial, const QString &why, const QString &more);
    // Coordinate descent from the current kernel, or after a restart from the best point since:
    // momentum, one step of each constant, joint moves of two, two steps of one.
    void descend();
    // A random untried configuration, seeded by `seed`, the kernel and how far the search has got.
    void restart(quint64 seed, const QString &kernelName);

    bool found() const { return m_found; }
    const TuneConfig &proposal() const { return m_proposal; }
    // Why it is proposed ("neighbour", "prior", "restart", ...) and where it comes from, if anywhere.
    const QString &reason() const { return m_reason; }
    const QString &detail() const { return m_detail; }
    // Constants that made no difference where they were measured, left alone (inertAxes).
    const QSet<QString> &inert() const { return m_inert; }

    // Constants that made no difference where they were measured (a chunk size for rows that fit
    // whole, a warp count of a path the shape never takes): three of their values with the other
    // constants equal within 2 % of each other, or two values within 1.5 % at two points of the other
    // constants; judged within 10 % of the best point measured, and nowhere there over 4 %. Their
    // values are then left alone: a move of one of them only would measure noise (and might keep it).
    static QSet<QString> inertAxes(const QVector<Tried> &tried, const TuneSpace &space);

private:
    QString identity(TuneConfig c) const;
    bool feasible(const TuneConfig &c) const;
    bool take(const TuneConfig &c, const QString &why, const QString &more = QString());
    bool covered(const TuneConfig &jump) const;
    // Sets m_walker; true when the last restart's points all failed (restart again).
    bool placeWalker();
    // The axis and direction of the last kept step that changed one constant; axis -1 if none.
    std::pair<int, int> momentum() const;
    bool tryStep(int axis, int step, const QString &why);
    void ring(int steps, const QString &why);
    void jointMoves();
    TuneConfig configAt(quint64 index) const;

    const AgentContext &m_context;
    const TuneSpace &m_space;
    const TuneConfig m_current;
    const QVector<Tried> m_tried;
    // Configurations that differ only in constants that made no difference are the same one.
    const QSet<QString> m_inert;
    QSet<QString> m_seen; // identities of the current and every tried configuration
    const double m_sharedMemoryKiB;
    const bool m_tensorDescriptors;
    TuneConfig m_walker; // where the descent stands

    bool m_found = false;
    TuneConfig m_proposal;
    QString m_reason, m_detail;
};

} // namespace ak
