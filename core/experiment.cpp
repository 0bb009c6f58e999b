#include "experiment.h"

#include "enumnames.h"

#include <QCoreApplication>

namespace ak {

namespace {
// The log's and results.tsv's tokens: renaming one strands runs already on disk.
constexpr EnumToken<ExperimentStatus> kStatusNames[] = {
    { ExperimentStatus::Running, "running" },
    { ExperimentStatus::Kept, "keep" },
    { ExperimentStatus::Reverted, "revert" },
    { ExperimentStatus::Failed, "fail" },
    { ExperimentStatus::Crashed, "crash" },
    { ExperimentStatus::Timeout, "timeout" },
    { ExperimentStatus::Pending, "pending" },
    { ExperimentStatus::Rejected, "reject" },
    { ExperimentStatus::Baseline, "baseline" },
};

// People's words for each status, marked for translation (statusText).
constexpr EnumToken<ExperimentStatus> kStatusWords[] = {
    { ExperimentStatus::Running, QT_TRANSLATE_NOOP("ExperimentStatus", "running") },
    { ExperimentStatus::Kept, QT_TRANSLATE_NOOP("ExperimentStatus", "kept") },
    { ExperimentStatus::Reverted, QT_TRANSLATE_NOOP("ExperimentStatus", "reverted") },
    { ExperimentStatus::Failed, QT_TRANSLATE_NOOP("ExperimentStatus", "failed") },
    { ExperimentStatus::Crashed, QT_TRANSLATE_NOOP("ExperimentStatus", "crashed") },
    { ExperimentStatus::Timeout, QT_TRANSLATE_NOOP("ExperimentStatus", "timed out") },
    { ExperimentStatus::Pending, QT_TRANSLATE_NOOP("ExperimentStatus", "pending") },
    { ExperimentStatus::Rejected, QT_TRANSLATE_NOOP("ExperimentStatus", "rejected") },
    { ExperimentStatus::Baseline, QT_TRANSLATE_NOOP("ExperimentStatus", "baseline") },
};

// The outcome categories' names: the report's CSS classes and the charts' series.
constexpr EnumToken<ExperimentOutcome> kOutcomeNames[] = {
    { ExperimentOutcome::Baseline, "baseline" },
    { ExperimentOutcome::Kept, "kept" },
    { ExperimentOutcome::Pending, "pending" },
    { ExperimentOutcome::Rejected, "rejected" },
    { ExperimentOutcome::Reverted, "reverted" },
    { ExperimentOutcome::Running, "running" },
    { ExperimentOutcome::Failed, "failed" },
};
} // namespace

ExperimentOutcome outcomeOf(ExperimentStatus s)
{
    switch (s) {
    case ExperimentStatus::Baseline:
        return ExperimentOutcome::Baseline;
    case ExperimentStatus::Kept:
        return ExperimentOutcome::Kept;
    case ExperimentStatus::Pending:
        return ExperimentOutcome::Pending;
    case ExperimentStatus::Rejected:
        return ExperimentOutcome::Rejected;
    case ExperimentStatus::Reverted:
        return ExperimentOutcome::Reverted;
    case ExperimentStatus::Running:
        return ExperimentOutcome::Running;
    case ExperimentStatus::Failed:
    case ExperimentStatus::Crashed:
    case ExperimentStatus::Timeout:
        break;
    }
    return ExperimentOutcome::Failed;
}

QString outcomeName(ExperimentOutcome o)
{
    return tokenOf(kOutcomeNames, o);
}

const char *outcomeColor(ExperimentOutcome o)
{
    switch (o) {
    case ExperimentOutcome::Baseline:
    case ExperimentOutcome::Kept:
        return "#2f7d32";
    case ExperimentOutcome::Pending:
        return "#e6a100";
    case ExperimentOutcome::Rejected:
        return "#b86f00";
    case ExperimentOutcome::Reverted:
        return "#9aa3b5";
    case ExperimentOutcome::Running:
    case ExperimentOutcome::Failed:
        break;
    }
    return "#c62828";
}

QString statusName(ExperimentStatus s)
{
    return tokenOf(kStatusNames, s);
}

bool parseStatus(const QString &text, ExperimentStatus *out)
{
    return fromToken(kStatusNames, text, out);
}

QString statusText(ExperimentStatus s)
{
    for (const EnumToken<ExperimentStatus> &w : kStatusWords)
        if (w.value == s)
            return QCoreApplication::translate("ExperimentStatus", w.token);
    return QString();
}

namespace {
bool sameNumber(double a, double b)
{
    return a == b || (std::isnan(a) && std::isnan(b));
}
} // namespace

bool operator==(const Metrics &a, const Metrics &b)
{
    return sameNumber(a.latencyUs, b.latencyUs) && sameNumber(a.refLatencyUs, b.refLatencyUs)
        && sameNumber(a.speedup, b.speedup) && sameNumber(a.tflops, b.tflops) && sameNumber(a.gbps, b.gbps)
        && sameNumber(a.pctPeak, b.pctPeak) && sameNumber(a.noisePct, b.noisePct)
        && sameNumber(a.peakVramMb, b.peakVramMb) && a.bound == b.bound && a.sandbox == b.sandbox
        && sameNumber(a.pctPeakSpec, b.pctPeakSpec) && a.roof == b.roof
        && sameNumber(a.compileLatencyUs, b.compileLatencyUs)
        && sameNumber(a.compileSpeedup, b.compileSpeedup) && a.compileNote == b.compileNote
        && a.judge == b.judge && a.isolation == b.isolation && a.precision == b.precision
        && a.correct == b.correct;
}

bool operator==(const Experiment &a, const Experiment &b)
{
    return a.id == b.id && a.status == b.status && a.kernel == b.kernel && a.commit == b.commit
        && a.parent == b.parent && a.agent == b.agent && a.description == b.description
        && a.failure == b.failure && a.metrics == b.metrics && a.started == b.started
        && a.finished == b.finished && sameNumber(a.agentSeconds, b.agentSeconds)
        && sameNumber(a.benchSeconds, b.benchSeconds) && a.tokensIn == b.tokensIn
        && a.tokensOut == b.tokensOut && sameNumber(a.cost, b.cost);
}

} // namespace ak
