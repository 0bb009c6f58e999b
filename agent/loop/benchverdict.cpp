#include "loop/benchverdict.h"

#include "keeprule.h"
#include "loop/orchestrator.h"
#include "runsnapshot.h"
#include "secrets.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

namespace ak {

namespace {

ExperimentStatus statusOf(const BenchResult &r)
{
    switch (r.status) {
    case BenchStatus::Timeout:
        return ExperimentStatus::Timeout;
    case BenchStatus::Crash:
        return ExperimentStatus::Crashed;
    default:
        return ExperimentStatus::Failed;
    }
}

// A speedup this many times the best any kernel of the same op type reached in the run (baselines
// included) is held for a person, as is anything the judge flagged. Without such a history, a
// speedup over PyTorch above kSuspiciousSpeedup is held. The absolute figure alone would hold every
// step of an op whose starter already beats an unfused eager reference by more than that (llama's
// rmsnorm on the H200: a 12.9x baseline, and every later improvement left pending overnight).
constexpr double kSuspiciousOverHistory = 3.0;
constexpr double kSuspiciousSpeedup = 10.0;

} // namespace

QString BenchVerdict::failureOf(const BenchResult &r)
{
    QString why = r.failure.isEmpty() ? BenchResult::statusName(r.status) : r.failure;
    if (r.status == BenchStatus::Error && !r.traceback.isEmpty()) {
        // The last traceback line names the exception; the whole traceback is in the harness log.
        const QStringList lines = r.traceback.trimmed().split(QLatin1Char('\n'));
        if (!lines.isEmpty() && !why.contains(lines.last().trimmed()))
            why += QStringLiteral(" (") + lines.last().trimmed() + QLatin1Char(')');
    }
    return secrets::redact(why.simplified());
}

QString BenchVerdict::suspicion(const BenchResult &bench, const RunSnapshot &run, const QString &kernel)
{
    QStringList why = bench.flags;
    const KernelRecord *k = run.kernel(kernel);
    double best = std::nan("");
    for (const Experiment &e : run.experiments) {
        const KernelRecord *other = run.kernel(e.kernel);
        const bool measured = e.status == ExperimentStatus::Kept || e.status == ExperimentStatus::Baseline
            || e.status == ExperimentStatus::Pending;
        if (other && k && other->opType == k->opType && measured && Metrics::has(e.metrics.speedup)
            && !(e.metrics.speedup <= best))
            best = e.metrics.speedup;
    }
    const double s = bench.metrics.speedup;
    const QString op = k ? k->opType : QStringLiteral("?");
    if (Metrics::has(best) && Metrics::has(s) && s > 2.0 && s > kSuspiciousOverHistory * best)
        why << QStringLiteral(
            "%1x over PyTorch is more than %2x the best any %3 kernel reached in this run (%4x)")
                   .arg(s, 0, 'f', 2)
                   .arg(kSuspiciousOverHistory, 0, 'g', 3)
                   .arg(op)
                   .arg(best, 0, 'f', 2);
    else if (!Metrics::has(best) && Metrics::has(s) && s > kSuspiciousSpeedup)
        why << QStringLiteral(
            "speedup %1x over the PyTorch reference is above %2x, and no %3 kernel in this run "
            "was measured before it: verify by hand")
                   .arg(s, 0, 'f', 1)
                   .arg(kSuspiciousSpeedup, 0, 'g', 3)
                   .arg(op);
    return secrets::redact(why.join(QStringLiteral("; ")));
}

BenchVerdict BenchVerdict::of(
    const BenchResult &bench, const RunSnapshot &run, const QString &kernel, bool stopRequested)
{
    BenchVerdict v;
    if (stopRequested && bench.status != BenchStatus::Ok) {
        v.status = ExperimentStatus::Crashed;
        v.text = QStringLiteral("interrupted: the loop was stopped during the benchmark");
        v.interrupted = true;
        return v;
    }
    if (bench.environmentError) {
        v.status = ExperimentStatus::Failed;
        v.text = QStringLiteral("harness problem (not the kernel): ") + failureOf(bench);
        v.environmentError = true;
        return v;
    }
    if (bench.status != BenchStatus::Ok || !bench.correct) {
        v.status = statusOf(bench);
        v.text = failureOf(bench);
        return v;
    }
    const KernelRecord *record = run.kernel(kernel);
    const Experiment *head = record ? run.experiment(record->headExperiment) : nullptr;
    const Experiment *base = Orchestrator::baseline(run, kernel);
    double old = head ? head->metrics.latencyUs : std::nan("");
    if (!Metrics::has(old) && base)
        old = base->metrics.latencyUs;
    const double noise = std::max(Metrics::has(bench.metrics.noisePct) ? bench.metrics.noisePct : 0.0,
        head && Metrics::has(head->metrics.noisePct) ? head->metrics.noisePct : 0.0);
    const double gain = improvementPct(old, bench.metrics.latencyUs);
    if (Metrics::has(old) && !shouldKeep(old, bench.metrics.latencyUs, noise)) {
        v.status = ExperimentStatus::Reverted;
        v.text
            = QStringLiteral("%1% %2 than the best (%3 -> %4 us); a keep needs > %5% faster and > noise %6%")
                  .arg(std::abs(gain), 0, 'f', 1)
                  .arg(gain < 0 ? QStringLiteral("slower") : QStringLiteral("faster"))
                  .arg(old, 0, 'f', 2)
                  .arg(bench.metrics.latencyUs, 0, 'f', 2)
                  .arg(kKeepMinImprovementPct, 0, 'g', 3)
                  .arg(noise, 0, 'f', 1);
        return v;
    }
    const QString why = suspicion(bench, run, kernel);
    if (!why.isEmpty()) {
        v.status = ExperimentStatus::Pending; // accept or reject it; the head stays where it is
        v.text = QStringLiteral("held for review: ") + why;
    }
    return v;
}

} // namespace ak
