#pragma once

#include "agents/agent.h"
#include "agents/tunesearch.h"
#include "agents/tunespace.h"

#include <QElapsedTimer>
#include <QHash>
#include <QMutex>

namespace ak {

// The offline default agent: no model, it rewrites the tunable constants of kernel.py (TuneSpace).
//
// Search (docs/agents.md, "Tune agent"): first what worked on the run's other kernels of the same op
// type (AgentContext::peers), then the priors shipped for the op on this architecture (TunePriors),
// each once; then coordinate descent from the current (best kept) kernel — the direction of the last
// kept improvement, one step on each constant, joint moves of two constants, two steps of one — and
// when every neighbour has been tried a random restart, whose neighbourhood is then descended from the
// best configuration measured since. When nothing untried is left it reports Exhausted. Each
// description says why it was proposed ("joint: BLOCK_M 256 -> 128, BLOCK_N 128 -> 256"). The steps
// are TuneSearch's; this class checks the kernel, reads the history and writes the proposal.
//
// It keeps no state between calls: every proposal is a function of the context (current kernel.py,
// the history of experiments with their results and the kernel.py each proposed) and the seed. So
// after a restart of the program it continues exactly where it was, and it never proposes a
// configuration that the history shows was already tried, whoever tried it.
class TuneAgent : public Agent
{
public:
    explicit TuneAgent(quint64 seed = 0);

    QString name() const override { return QStringLiteral("tune"); }
    AgentResult propose(const AgentContext &context) override;

    // Higher is better: speedup, else reference/latency; -inf for a failed or incorrect experiment.
    static double score(const Experiment &e);

private:
    QVector<TuneSearch::Tried> learn(const AgentContext &context, const TuneSpace &space);
    bool configOfText(const QString &kernelPy, const TuneSpace &space, TuneConfig *out);
    // The search's first steps: what worked on the run's other kernels of the op type, what was kept
    // in earlier runs, then the priors for the op on this architecture; each jump once.
    void jumpToKnown(const AgentContext &context, const TuneSpace &space, TuneSearch *search);
    // kernel.py with the found configuration's constants, described by what changed and why.
    AgentResult rewrite(const AgentContext &context, const TuneSpace &space, const TuneConfig &current,
        const TuneSearch &search, const QElapsedTimer &clock) const;
    AgentResult failed(const QElapsedTimer &clock, AgentError::Kind kind, const QString &why) const;

    quint64 m_seed;
    // kernel.py text -> its static info; only a cache (parsing history texts is the slow part).
    QMutex m_cacheMutex;
    QHash<QString, KernelStaticInfo> m_infoCache;
};

} // namespace ak
