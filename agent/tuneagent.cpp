#include "tuneagent.h"

#include "kernelstaticcheck.h"
#include "numberformat.h"
#include "promptbuilder.h"
#include "tunepriors.h"

#include <QElapsedTimer>
#include <QSet>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace ak {
namespace {

constexpr double kFailed = -std::numeric_limits<double>::infinity();
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

QString sortedNames(const QSet<QString> &names)
{
    QStringList list(names.cbegin(), names.cend());
    list.sort();
    return list.join(QStringLiteral(", "));
}

bool isRestart(const Experiment &e)
{
    return e.agent == QLatin1String("tune") && e.description.startsWith(QLatin1String("restart"));
}

} // namespace

TuneAgent::TuneAgent(quint64 seed)
    : m_seed(seed)
{ }

double TuneAgent::score(const Experiment &e)
{
    switch (e.status) {
    case ExperimentStatus::Kept:
    case ExperimentStatus::Reverted:
    case ExperimentStatus::Pending:
    case ExperimentStatus::Baseline:
        break;
    default:
        return kFailed;
    }
    const Metrics &m = e.metrics;
    if (!m.correct)
        return kFailed;
    if (Metrics::has(m.speedup))
        return m.speedup;
    if (Metrics::has(m.latencyUs) && m.latencyUs > 0)
        return (Metrics::has(m.refLatencyUs) ? m.refLatencyUs : 1.0) / m.latencyUs;
    return kFailed;
}

bool TuneAgent::configOfText(const QString &kernelPy, const TuneSpace &space, TuneConfig *out)
{
    KernelStaticInfo info;
    {
        QMutexLocker lock(&m_cacheMutex);
        const auto it = m_infoCache.constFind(kernelPy);
        if (it != m_infoCache.cend())
            info = it.value();
    }
    if (info.kernelType.isEmpty() && info.error.isEmpty()) {
        info = checkKernelSource(kernelPy.toUtf8());
        QMutexLocker lock(&m_cacheMutex);
        if (m_infoCache.size() > 4096)
            m_infoCache.clear();
        m_infoCache.insert(kernelPy, info);
    }
    return info.ok && space.configOf(info, out);
}

QVector<TuneAgent::Tried> TuneAgent::learn(const AgentContext &context, const TuneSpace &space)
{
    QVector<Tried> tried;
    for (const Experiment &e : context.history) {
        if (!context.kernelName.isEmpty() && !e.kernel.isEmpty() && e.kernel != context.kernelName)
            continue;
        const QString text = context.historyKernelPy.value(e.id);
        TuneConfig config;
        if (text.isEmpty() || !configOfText(text, space, &config))
            continue; // its configuration is unknown: it cannot be avoided or learnt from
        tried.append(Tried { config, score(e), &e });
    }
    return tried;
}

QSet<QString> TuneAgent::inertAxes(const QVector<Tried> &tried, const TuneSpace &space)
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

AgentResult TuneAgent::propose(const AgentContext &context)
{
    QElapsedTimer clock;
    clock.start();
    auto done = [&](AgentResult r) { return finish(std::move(r), double(clock.elapsed()) / 1000.0); };
    auto fail = [&](AgentError::Kind kind, const QString &why) {
        AgentError e;
        e.kind = kind;
        e.reason = why;
        return done(AgentResult::failure(e));
    };
    if (stopRequested())
        return cancelled(0);
    // A loop that did not run the static check leaves a default KernelStaticInfo: run it here.
    KernelStaticInfo info = context.staticInfo;
    if (!info.ok && info.error.isEmpty())
        info = checkKernelSource(context.kernelPy.toUtf8());
    if (!info.ok)
        return fail(AgentError::Kind::Config,
            QStringLiteral("the current kernel.py did not pass the static check: ") + info.error);

    const TuneSpace space = TuneSpace::fromStaticInfo(info);
    if (space.isEmpty())
        return fail(AgentError::Kind::Exhausted,
            QStringLiteral(
                "kernel.py declares no tunable constants (UPPER_CASE int constants, or TUNE_SPACE)"));
    TuneConfig current;
    space.configOf(info, &current);

    const QVector<Tried> tried = learn(context, space);
    // Configurations that differ only in constants that made no difference are the same one.
    const QSet<QString> inert = inertAxes(tried, space);
    auto identity = [&inert](TuneConfig c) {
        for (const QString &name : inert)
            c.remove(name);
        return TuneSpace::key(c);
    };
    QSet<QString> seen { identity(current) };
    for (const Tried &t : tried)
        seen.insert(identity(t.config));

    // Where the descent stands: the current kernel, or after a restart the best point measured since.
    TuneConfig walker = current;
    int lastRestart = -1;
    for (int i = 0; i < tried.size(); ++i) {
        if (isRestart(*tried.at(i).experiment))
            lastRestart = i;
    }
    bool restartNow = false;
    if (lastRestart >= 0) {
        double best = kFailed;
        for (int i = lastRestart; i < tried.size(); ++i) {
            if (tried.at(i).score > best) {
                best = tried.at(i).score;
                walker = tried.at(i).config;
            }
        }
        // A restart point that failed gives nothing to descend from; the current kernel is done too.
        restartNow = best == kFailed;
        if (restartNow)
            walker = current;
    }

    // Momentum: the last kept step that changed one constant is tried again in the same direction.
    int momentumAxis = -1, momentumDir = 0;
    {
        const TuneConfig *previous = nullptr;
        const TuneConfig *latest = nullptr;
        for (const Tried &t : tried) {
            const ExperimentStatus s = t.experiment->status;
            if (s == ExperimentStatus::Kept || s == ExperimentStatus::Baseline) {
                previous = latest;
                latest = &t.config;
            }
        }
        if (previous && latest) {
            int changed = 0;
            for (int a = 0; a < space.axes().size(); ++a) {
                const QString &n = space.axes().at(a).name;
                const int from = space.indexOf(a, previous->value(n));
                const int to = space.indexOf(a, latest->value(n));
                if (from != to && from >= 0 && to >= 0) {
                    ++changed;
                    momentumAxis = a;
                    momentumDir = to > from ? 1 : -1;
                }
            }
            if (changed != 1)
                momentumAxis = -1;
        }
    }

    TuneConfig proposal;
    QString reason, detail; // why it is proposed, for the description: the commit list reads as a search
    bool found = false;
    // A tile that needs more shared memory than the device has does not compile: never proposed.
    const double sharedMemoryKiB = TunePriors::sharedMemoryKiB(context.device);
    const bool tensorDescriptors = TunePriors::hasTensorDescriptors(context.device);
    auto feasible = [&](const TuneConfig &c) {
        return TunePriors::fitsSharedMemory(
            c, sharedMemoryKiB, context.record.dtype, context.record.opType, tensorDescriptors);
    };
    auto take = [&](const TuneConfig &c, const QString &why, const QString &more = QString()) {
        if (found || seen.contains(identity(c)) || !feasible(c))
            return false;
        proposal = c;
        reason = why;
        detail = more;
        found = true;
        return true;
    };
    // A jump (another kernel's best, a prior) is made once: done when a configuration with its
    // constants was tried, whatever the others were.
    auto covered = [&](const TuneConfig &jump) {
        auto matches = [&](const TuneConfig &c) {
            for (auto it = jump.constBegin(); it != jump.constEnd(); ++it)
                if (c.value(it.key()) != it.value())
                    return false;
            return true;
        };
        if (matches(current))
            return true;
        for (const Tried &t : tried)
            if (matches(t.config))
                return true;
        return false;
    };
    auto jump = [&](const TuneConfig &partial, const QString &why, const QString &more) {
        TuneConfig c, onSpace;
        if (!TunePriors::apply(partial, space, current, &c))
            return false;
        for (const TuneAxis &a : space.axes())
            if (partial.contains(a.name) && c.value(a.name) == partial.value(a.name))
                onSpace.insert(a.name, partial.value(a.name));
        return !covered(onSpace) && take(c, why, more);
    };
    // What this run measured on kernels of the same op type (on this machine), then what is known
    // for the op on this architecture.
    for (const PeerKernel &peer : context.peers) {
        TuneConfig theirs;
        if (!found && configOfText(peer.kernelPy, space, &theirs))
            jump(theirs, QStringLiteral("from %1").arg(peer.kernel),
                QStringLiteral("its best, %1 PyTorch").arg(formatRatio(peer.speedup)));
    }
    for (const TuneMemory::Entry &earlier : context.remembered)
        if (!found)
            jump(earlier.config, QStringLiteral("remembered"),
                QStringLiteral("kept in an earlier run on %1, %2, %3 PyTorch%4")
                    .arg(earlier.device, earlier.when.date().toString(Qt::ISODate),
                        formatRatio(earlier.speedup),
                        earlier.shapes == TuneMemory::shapesOf(context.record)
                            ? QString()
                            : QStringLiteral(", other shapes")));
    for (const TunePriors::Prior &prior :
        TunePriors::forKernel(context.opType, PromptBuilder::architectureFamily(context.device)))
        if (!found)
            jump(prior.config, QStringLiteral("prior"), prior.why);

    auto tryStep = [&](int axis, int step, const QString &why) {
        const TuneAxis &a = space.axes().at(axis);
        const int at = space.indexOf(axis, walker.value(a.name));
        if (at < 0 || at + step < 0 || at + step >= a.values.size())
            return false;
        TuneConfig c = walker;
        c.insert(a.name, a.values.at(at + step));
        return take(c, why);
    };
    if (!restartNow && !found) {
        if (momentumAxis >= 0 && walker == current)
            tryStep(momentumAxis, momentumDir, QStringLiteral("momentum"));
        auto ring = [&](int steps, const QString &why) {
            for (int a = 0; a < space.axes().size() && !found; ++a)
                if (!tryStep(a, steps, why))
                    tryStep(a, -steps, why);
        };
        ring(1, QStringLiteral("neighbour"));
        // Joint moves: two constants one step each, before two steps of one: optima one constant at a
        // time cannot reach (a wider tile that only pays with a narrower one beside it) come first.
        for (int a = 0; a < space.axes().size() && !found; ++a)
            for (int b = a + 1; b < space.axes().size() && !found; ++b)
                for (int da : { 1, -1 })
                    for (int db : { 1, -1 }) {
                        const TuneAxis &x = space.axes().at(a), &y = space.axes().at(b);
                        const int i = space.indexOf(a, walker.value(x.name)) + da;
                        const int j = space.indexOf(b, walker.value(y.name)) + db;
                        if (found || i < 0 || j < 0 || i >= x.values.size() || j >= y.values.size())
                            continue;
                        TuneConfig c = walker;
                        c.insert(x.name, x.values.at(i));
                        c.insert(y.name, y.values.at(j));
                        take(c, QStringLiteral("joint"));
                    }
        ring(2, QStringLiteral("two steps"));
    }
    if (!found) {
        // Seeded by the seed, the kernel and how far the search has got: the same history gives the same
        // restart.
        std::seed_seq seq { quint32(m_seed), quint32(m_seed >> 32), quint32(fnv1a(context.kernelName)),
            quint32(tried.size()) };
        std::mt19937_64 rng(seq);
        const QVector<TuneAxis> &axes = space.axes();
        auto configAt = [&](quint64 index) {
            TuneConfig c;
            for (const TuneAxis &a : axes) {
                c.insert(a.name, a.values.at(int(index % quint64(a.values.size()))));
                index /= quint64(a.values.size());
            }
            return c;
        };
        if (space.gridSize() <= kEnumerateLimit) {
            QVector<quint64> untried;
            for (quint64 i = 0; i < quint64(space.gridSize()); ++i) {
                const TuneConfig c = configAt(i);
                if (!seen.contains(identity(c)) && feasible(c))
                    untried.append(i);
            }
            if (!untried.isEmpty())
                take(configAt(untried.at(int(rng() % quint64(untried.size())))), QStringLiteral("restart"));
        } else {
            for (int attempt = 0; attempt < 1000 && !found; ++attempt) {
                TuneConfig c;
                for (const TuneAxis &a : axes)
                    c.insert(a.name, a.values.at(int(rng() % quint64(a.values.size()))));
                take(c, QStringLiteral("restart"));
            }
        }
    }
    if (!found)
        return fail(AgentError::Kind::Exhausted,
            QStringLiteral("every configuration of the %1 tunable constants has been tried (or needs more "
                           "shared memory than the device has)%2")
                .arg(space.axes().size())
                .arg(inert.isEmpty() ? QString()
                                     : QStringLiteral("; %1 made no difference").arg(sortedNames(inert))));

    QMap<QString, double> changes;
    QStringList described;
    for (int i = 0; i < space.axes().size(); ++i) {
        const TuneAxis &a = space.axes().at(i);
        const double from = current.value(a.name);
        const double to = proposal.value(a.name);
        if (space.indexOf(i, from) == space.indexOf(i, to))
            continue;
        changes.insert(a.name, to);
        described << QStringLiteral("%1 %2 -> %3")
                         .arg(a.name, TuneSpace::format(from, a.isInteger),
                             TuneSpace::format(to, a.isInteger));
    }
    QString error;
    const QByteArray text = rewriteConstants(context.kernelPy.toUtf8(), changes, &error);
    if (text.isEmpty())
        return fail(AgentError::Kind::Config,
            QStringLiteral("could not rewrite the constants of kernel.py: ") + error);

    AgentProposal p;
    p.kernelPy = QString::fromUtf8(text);
    // "neighbour: BLOCK_N 128 -> 256", "prior: … (where it comes from)"; restarts keep their prefix
    // (isRestart reads it back from the history).
    if (!inert.isEmpty()) // so the commit list says why those constants stopped moving
        detail += (detail.isEmpty() ? QString() : QStringLiteral("; "))
            + QStringLiteral("%1 left alone: no effect measured").arg(sortedNames(inert));
    p.description = QStringLiteral("%1: %2").arg(reason, described.join(QStringLiteral(", ")))
        + (detail.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(detail));
    return done(AgentResult::success(std::move(p)));
}

} // namespace ak
