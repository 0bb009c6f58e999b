#include "loop/orchestrator.h"

#include "agents/agentresult.h"
#include "runloader.h"

#include <algorithm>

namespace ak {

QStringList Orchestrator::amdahlOrder(const RunSnapshot &run, int maxKernels)
{
    QVector<const KernelRecord *> kernels;
    for (const KernelRecord &k : run.kernels)
        kernels.push_back(&k);
    // Gain at 90% of the roof is Amdahl's law with the kernel's attainable speedup; it is only
    // comparable between kernels when every kernel has a roof, so mix it with shares never. A kernel
    // without a roof has floor 0 (the profiler then writes a gain of exactly 1, not 0).
    const bool roofs = std::all_of(kernels.begin(), kernels.end(),
        [](const KernelRecord *k) { return k->floorUs > 0 && k->modelSpeedupAt90 > 0; });
    std::stable_sort(kernels.begin(), kernels.end(), [roofs](const KernelRecord *a, const KernelRecord *b) {
        if (roofs && a->modelSpeedupAt90 != b->modelSpeedupAt90)
            return a->modelSpeedupAt90 > b->modelSpeedupAt90;
        if (a->share != b->share)
            return a->share > b->share;
        return a->rank < b->rank;
    });
    QStringList names;
    for (const KernelRecord *k : kernels) {
        if (maxKernels > 0 && names.size() >= maxKernels)
            break;
        names << KernelRecord::keyOf(k->folder);
    }
    return names;
}

bool Orchestrator::isRevertLike(ExperimentStatus s)
{
    switch (s) {
    case ExperimentStatus::Reverted:
    case ExperimentStatus::Failed:
    case ExperimentStatus::Crashed:
    case ExperimentStatus::Timeout:
    case ExperimentStatus::Rejected:
        return true;
    default:
        return false;
    }
}

const Experiment *Orchestrator::baseline(const RunSnapshot &run, const QString &kernel)
{
    for (const Experiment &e : run.experiments)
        if (e.kernel == kernel && e.status == ExperimentStatus::Baseline)
            return &e;
    return nullptr;
}

bool Orchestrator::needsBaseline(const RunSnapshot &run, const QString &kernel)
{
    const Experiment *b = baseline(run, kernel);
    return b && !(b->metrics.correct && Metrics::has(b->metrics.latencyUs));
}

KernelProgress Orchestrator::progress(const RunSnapshot &run, const QString &kernel, const QDateTime &now)
{
    KernelProgress p;
    p.now = now;
    p.inModelMisses = run.inModel.missesInARow(kernel);
    const KernelRecord *k = run.kernel(kernel);
    const Experiment *base = baseline(run, kernel);
    const Experiment *head = k ? run.experiment(k->headExperiment) : nullptr;
    if (head && head->metrics.correct) {
        p.bestPctPeak = head->metrics.pctPeak;
        if (base && Metrics::has(base->metrics.latencyUs) && Metrics::has(head->metrics.latencyUs)
            && head->metrics.latencyUs > 0)
            p.bestSpeedup = base->metrics.latencyUs / head->metrics.latencyUs;
    }
    double seconds = 0;
    bool any = false;
    for (const Experiment &e : run.experiments) {
        if (e.kernel != kernel || e.status == ExperimentStatus::Baseline)
            continue;
        if (e.status == ExperimentStatus::Failed && AgentError::isOutageDescription(e.description))
            continue; // the agent was unreachable: nothing was tried on the kernel
        if (e.agent == QLatin1String("user")) // a person's revert: a fresh start for the give-up rule
            p.consecutiveReverts = 0;
        else if (isRevertLike(e.status))
            ++p.consecutiveReverts;
        else if (e.status != ExperimentStatus::Running)
            p.consecutiveReverts = 0;
        if (e.agent == QLatin1String("user"))
            continue;
        any = true;
        // benchSeconds, not finished - started: `finished` moves when a person accepts or rejects a
        // pending experiment, and a crash repaired on the next open is finished then, so the span
        // would count the hours spent waiting for review or with the loop stopped.
        seconds += std::max(0.0, e.agentSeconds) + std::max(0.0, e.benchSeconds);
    }
    if (any)
        p.started = now.addMSecs(-qint64(seconds * 1000.0));
    return p;
}

Orchestrator::Choice Orchestrator::next(const RunSnapshot &run, const MoveOnRules &rules, int maxKernels,
    const QSet<QString> &claimed, const QDateTime &now)
{
    Choice c;
    for (const QString &name : amdahlOrder(run, maxKernels)) {
        const KernelRecord *k = run.kernel(name);
        if (!k || (k->state != KernelState::Waiting && k->state != KernelState::Active)
            || claimed.contains(name))
            continue;
        if (!needsBaseline(run, name)) {
            const MoveOnDecision d = evaluate(rules, progress(run, name, now));
            if (d.moveOn) {
                c.retire.push_back({ name, d });
                continue;
            }
        }
        c.kernel = name;
        break;
    }
    return c;
}

MoveOnRules Orchestrator::rulesOf(const RunSnapshot &run, QString *error)
{
    // The defaults on any problem (RunConfig::parse puts them there and says why).
    if (!run.config.moveOnWarning.isEmpty() && error)
        *error = run.config.moveOnWarning + QStringLiteral(" (using the defaults)");
    return run.config.moveOn;
}

} // namespace ak
