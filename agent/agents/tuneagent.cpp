#include "agents/tuneagent.h"

#include "agents/promptbuilder.h"
#include "agents/tunepriors.h"
#include "kernelstaticcheck.h"
#include "numberformat.h"

#include <QElapsedTimer>
#include <QSet>
#include <QStringList>

namespace ak {
namespace {

QString sortedNames(const QSet<QString> &names)
{
    QStringList list(names.cbegin(), names.cend());
    list.sort();
    return list.join(QStringLiteral(", "));
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
        return TuneSearch::kFailed;
    }
    const Metrics &m = e.metrics;
    if (!m.correct)
        return TuneSearch::kFailed;
    if (Metrics::has(m.speedup))
        return m.speedup;
    if (Metrics::has(m.latencyUs) && m.latencyUs > 0)
        return (Metrics::has(m.refLatencyUs) ? m.refLatencyUs : 1.0) / m.latencyUs;
    return TuneSearch::kFailed;
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

QVector<TuneSearch::Tried> TuneAgent::learn(const AgentContext &context, const TuneSpace &space)
{
    QVector<TuneSearch::Tried> tried;
    for (const Experiment &e : context.history) {
        if (!context.kernelName.isEmpty() && !e.kernel.isEmpty() && e.kernel != context.kernelName)
            continue;
        const QString text = context.historyKernelPy.value(e.id);
        TuneConfig config;
        if (text.isEmpty() || !configOfText(text, space, &config))
            continue; // its configuration is unknown: it cannot be avoided or learnt from
        tried.append(TuneSearch::Tried { config, score(e), &e });
    }
    return tried;
}

AgentResult TuneAgent::failed(const QElapsedTimer &clock, AgentError::Kind kind, const QString &why) const
{
    AgentError e;
    e.kind = kind;
    e.reason = why;
    return finish(AgentResult::failure(e), double(clock.elapsed()) / 1000.0);
}

AgentResult TuneAgent::propose(const AgentContext &context)
{
    QElapsedTimer clock;
    clock.start();
    if (stopRequested())
        return cancelled(0);
    // A loop that did not run the static check leaves a default KernelStaticInfo: run it here.
    KernelStaticInfo info = context.staticInfo;
    if (!info.ok && info.error.isEmpty())
        info = checkKernelSource(context.kernelPy.toUtf8());
    if (!info.ok)
        return failed(clock, AgentError::Kind::Config,
            QStringLiteral("the current kernel.py did not pass the static check: ") + info.error);

    const TuneSpace space = TuneSpace::fromStaticInfo(info);
    if (space.isEmpty())
        return failed(clock, AgentError::Kind::Exhausted,
            QStringLiteral(
                "kernel.py declares no tunable constants (UPPER_CASE int constants, or TUNE_SPACE)"));
    TuneConfig current;
    space.configOf(info, &current);

    // Each step proposes only while the ones before it found nothing.
    TuneSearch search(context, space, current, learn(context, space));
    jumpToKnown(context, space, &search);
    search.descend();
    search.restart(m_seed, context.kernelName);
    if (!search.found())
        return failed(clock, AgentError::Kind::Exhausted,
            QStringLiteral("every configuration of the %1 tunable constants has been tried (or needs more "
                           "shared memory than the device has)%2")
                .arg(space.axes().size())
                .arg(search.inert().isEmpty()
                        ? QString()
                        : QStringLiteral("; %1 made no difference").arg(sortedNames(search.inert()))));
    return rewrite(context, space, current, search, clock);
}

void TuneAgent::jumpToKnown(const AgentContext &context, const TuneSpace &space, TuneSearch *search)
{
    // What this run measured on kernels of the same op type (on this machine), then what is known
    // for the op on this architecture. A peer's kernel.py is parsed only while nothing is found.
    for (const PeerKernel &peer : context.peers) {
        TuneConfig theirs;
        if (!search->found() && configOfText(peer.kernelPy, space, &theirs))
            search->jump(theirs, QStringLiteral("from %1").arg(peer.kernel),
                QStringLiteral("its best, %1 PyTorch").arg(formatRatio(peer.speedup)));
    }
    for (const TuneMemory::Entry &earlier : context.remembered)
        if (!search->found())
            search->jump(earlier.config, QStringLiteral("remembered"),
                QStringLiteral("kept in an earlier run on %1, %2, %3 PyTorch%4")
                    .arg(earlier.device, earlier.when.date().toString(Qt::ISODate),
                        formatRatio(earlier.speedup),
                        earlier.shapes == TuneMemory::shapesOf(context.record)
                            ? QString()
                            : QStringLiteral(", other shapes")));
    for (const TunePriors::Prior &prior :
        TunePriors::forKernel(context.opType, PromptBuilder::architectureFamily(context.device)))
        if (!search->found())
            search->jump(prior.config, QStringLiteral("prior"), prior.why);
}

AgentResult TuneAgent::rewrite(const AgentContext &context, const TuneSpace &space, const TuneConfig &current,
    const TuneSearch &search, const QElapsedTimer &clock) const
{
    const TuneConfig &proposal = search.proposal();
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
        return failed(clock, AgentError::Kind::Config,
            QStringLiteral("could not rewrite the constants of kernel.py: ") + error);

    AgentProposal p;
    p.kernelPy = QString::fromUtf8(text);
    // "neighbour: BLOCK_N 128 -> 256", "prior: … (where it comes from)"; restarts keep their prefix
    // (TuneSearch reads it back from the history).
    QString detail = search.detail();
    if (!search.inert().isEmpty()) // so the commit list says why those constants stopped moving
        detail += (detail.isEmpty() ? QString() : QStringLiteral("; "))
            + QStringLiteral("%1 left alone: no effect measured").arg(sortedNames(search.inert()));
    p.description = QStringLiteral("%1: %2").arg(search.reason(), described.join(QStringLiteral(", ")))
        + (detail.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(detail));
    return finish(AgentResult::success(std::move(p)), double(clock.elapsed()) / 1000.0);
}

} // namespace ak
