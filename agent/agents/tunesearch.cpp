#include "agents/tunesearch.h"

#include "agents/tunepriors.h"

#include <QHash>
#include <QMap>

#include <algorithm>
#include <random>

namespace ak {
namespace {

constexpr double kEnumerateLimit = 100000; // grids up to this size are enumerated for restarts

// Stable across processes (qHash is seeded per process), so restarts replay after a restart.
quint64 fnv1a(const QString &text)
{
    quint64 h = 1469598103934665603ull;
    for (const QChar c : text) {
        h ^= c.unicode();
        h *= 1099511628211ull;
    }
    return h;
}

bool isRestart(const Experiment &e)
{
    return e.agent == QLatin1String("tune") && e.description.startsWith(QLatin1String("restart"));
}

} // namespace

TuneSearch::TuneSearch(
    const AgentContext &context, const TuneSpace &space, const TuneConfig &current, QVector<Tried> tried)
    : m_context(context)
    , m_space(space)
    , m_current(current)
    , m_tried(std::move(tried))
    , m_inert(inertAxes(m_tried, space))
    , m_sharedMemoryKiB(TunePriors::sharedMemoryKiB(context.device))
    , m_tensorDescriptors(TunePriors::hasTensorDescriptors(context.device))
    , m_walker(current)
{
    m_seen.insert(identity(m_current));
    for (const Tried &t : m_tried)
        m_seen.insert(identity(t.config));
}

QSet<QString> TuneSearch::inertAxes(const QVector<Tried> &tried, const TuneSpace &space)
{
    // Judged only near the best point measured: far from it a constant's effect drowns in a slow
    // kernel's time (0.3 us on 45 us), and it would be set aside before it could matter.
    double best = 0;
    for (const Tried &t : tried)
        best = std::max(best, t.score);
    QSet<QString> out;
    for (const TuneAxis &axis : space.axes()) {
        // The other constants' values -> this one's value -> its best score there.
        QHash<QString, QMap<double, double>> groups;
        for (const Tried &t : tried) {
            if (t.score == kFailed)
                continue;
            TuneConfig rest = t.config;
            rest.remove(axis.name);
            QMap<double, double> &group = groups[TuneSpace::key(rest)];
            const double v = t.config.value(axis.name);
            group.insert(v, std::max(group.value(v, 0.0), t.score));
        }
        int flatPairs = 0;
        bool flat = false, matters = false;
        for (const QMap<double, double> &group : std::as_const(groups)) {
            if (group.size() < 2)
                continue;
            const auto [lo, hi] = std::minmax_element(group.cbegin(), group.cend());
            const double spread = *hi / *lo;
            if (*hi < 0.9 * best)
                continue;
            if (spread > 1.04)
                matters = true;
            else if (group.size() >= 3 && spread <= 1.02)
                flat = true;
            else if (spread <= 1.015)
                ++flatPairs;
        }
        flat = flat || flatPairs >= 2; // the same at two points of the other constants
        if (flat && !matters)
            out.insert(axis.name);
    }
    return out;
}

QString TuneSearch::identity(TuneConfig c) const
{
    for (const QString &name : m_inert)
        c.remove(name);
    return TuneSpace::key(c);
}

bool TuneSearch::feasible(const TuneConfig &c) const
{
    // A tile that needs more shared memory than the device has does not compile: never proposed.
    return TunePriors::fitsSharedMemory(
        c, m_sharedMemoryKiB, m_context.record.dtype, m_context.record.opType, m_tensorDescriptors);
}

bool TuneSearch::take(const TuneConfig &c, const QString &why, const QString &more)
{
    if (m_found || m_seen.contains(identity(c)) || !feasible(c))
        return false;
    m_proposal = c;
    m_reason = why;
    m_detail = more;
    m_found = true;
    return true;
}

bool TuneSearch::covered(const TuneConfig &jump) const
{
    auto matches = [&jump](const TuneConfig &c) {
        for (auto it = jump.constBegin(); it != jump.constEnd(); ++it)
            if (c.value(it.key()) != it.value())
                return false;
        return true;
    };
    if (matches(m_current))
        return true;
    for (const Tried &t : m_tried)
        if (matches(t.config))
            return true;
    return false;
}

bool TuneSearch::jump(const TuneConfig &partial, const QString &why, const QString &more)
{
    TuneConfig c, onSpace;
    if (!TunePriors::apply(partial, m_space, m_current, &c))
        return false;
    // Only the constants the jump could set count for "tried": one off the space was not moved.
    for (const TuneAxis &a : m_space.axes())
        if (partial.contains(a.name) && c.value(a.name) == partial.value(a.name))
            onSpace.insert(a.name, partial.value(a.name));
    return !covered(onSpace) && take(c, why, more);
}

bool TuneSearch::placeWalker()
{
    m_walker = m_current;
    int lastRestart = -1;
    for (int i = 0; i < m_tried.size(); ++i) {
        if (isRestart(*m_tried.at(i).experiment))
            lastRestart = i;
    }
    if (lastRestart < 0)
        return false;
    double best = kFailed;
    for (int i = lastRestart; i < m_tried.size(); ++i) {
        if (m_tried.at(i).score > best) {
            best = m_tried.at(i).score;
            m_walker = m_tried.at(i).config;
        }
    }
    // A restart point that failed gives nothing to descend from; the current kernel is done too.
    if (best != kFailed)
        return false;
    m_walker = m_current;
    return true;
}

std::pair<int, int> TuneSearch::momentum() const
{
    const TuneConfig *previous = nullptr;
    const TuneConfig *latest = nullptr;
    for (const Tried &t : m_tried) {
        const ExperimentStatus s = t.experiment->status;
        if (s == ExperimentStatus::Kept || s == ExperimentStatus::Baseline) {
            previous = latest;
            latest = &t.config;
        }
    }
    if (!previous || !latest)
        return { -1, 0 };
    int changed = 0, axis = -1, dir = 0;
    for (int a = 0; a < m_space.axes().size(); ++a) {
        const QString &n = m_space.axes().at(a).name;
        const int from = m_space.indexOf(a, previous->value(n));
        const int to = m_space.indexOf(a, latest->value(n));
        if (from != to && from >= 0 && to >= 0) {
            ++changed;
            axis = a;
            dir = to > from ? 1 : -1;
        }
    }
    return changed == 1 ? std::pair { axis, dir } : std::pair { -1, 0 };
}

bool TuneSearch::tryStep(int axis, int step, const QString &why)
{
    const TuneAxis &a = m_space.axes().at(axis);
    const int at = m_space.indexOf(axis, m_walker.value(a.name));
    if (at < 0 || at + step < 0 || at + step >= a.values.size())
        return false;
    TuneConfig c = m_walker;
    c.insert(a.name, a.values.at(at + step));
    return take(c, why);
}

void TuneSearch::ring(int steps, const QString &why)
{
    for (int a = 0; a < m_space.axes().size() && !m_found; ++a)
        if (!tryStep(a, steps, why))
            tryStep(a, -steps, why);
}

void TuneSearch::jointMoves()
{
    for (int a = 0; a < m_space.axes().size() && !m_found; ++a)
        for (int b = a + 1; b < m_space.axes().size() && !m_found; ++b)
            for (int da : { 1, -1 })
                for (int db : { 1, -1 }) {
                    const TuneAxis &x = m_space.axes().at(a), &y = m_space.axes().at(b);
                    const int i = m_space.indexOf(a, m_walker.value(x.name)) + da;
                    const int j = m_space.indexOf(b, m_walker.value(y.name)) + db;
                    if (m_found || i < 0 || j < 0 || i >= x.values.size() || j >= y.values.size())
                        continue;
                    TuneConfig c = m_walker;
                    c.insert(x.name, x.values.at(i));
                    c.insert(y.name, y.values.at(j));
                    take(c, QStringLiteral("joint"));
                }
}

void TuneSearch::descend()
{
    // After a restart whose points all failed there is nothing to descend from: restart again.
    if (m_found || placeWalker())
        return;
    // Momentum: the last kept step that changed one constant is tried again in the same direction.
    const auto [axis, dir] = momentum();
    if (axis >= 0 && m_walker == m_current)
        tryStep(axis, dir, QStringLiteral("momentum"));
    ring(1, QStringLiteral("neighbour"));
    // Joint moves: two constants one step each, before two steps of one: optima one constant at a
    // time cannot reach (a wider tile that only pays with a narrower one beside it) come first.
    jointMoves();
    ring(2, QStringLiteral("two steps"));
}

TuneConfig TuneSearch::configAt(quint64 index) const
{
    TuneConfig c;
    for (const TuneAxis &a : m_space.axes()) {
        c.insert(a.name, a.values.at(int(index % quint64(a.values.size()))));
        index /= quint64(a.values.size());
    }
    return c;
}

void TuneSearch::restart(quint64 seed, const QString &kernelName)
{
    if (m_found)
        return;
    // Seeded by the seed, the kernel and how far the search has got: the same history gives the same
    // restart.
    std::seed_seq seq { quint32(seed), quint32(seed >> 32), quint32(fnv1a(kernelName)),
        quint32(m_tried.size()) };
    std::mt19937_64 rng(seq);
    if (m_space.gridSize() <= kEnumerateLimit) {
        QVector<quint64> untried;
        for (quint64 i = 0; i < quint64(m_space.gridSize()); ++i) {
            const TuneConfig c = configAt(i);
            if (!m_seen.contains(identity(c)) && feasible(c))
                untried.append(i);
        }
        if (!untried.isEmpty())
            take(configAt(untried.at(int(rng() % quint64(untried.size())))), QStringLiteral("restart"));
        return;
    }
    for (int attempt = 0; attempt < 1000 && !m_found; ++attempt) {
        TuneConfig c;
        for (const TuneAxis &a : m_space.axes())
            c.insert(a.name, a.values.at(int(rng() % quint64(a.values.size()))));
        take(c, QStringLiteral("restart"));
    }
}

} // namespace ak
