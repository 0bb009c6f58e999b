#include "experiment.h"

#include <array>
#include <utility>

namespace ak {

namespace {
const std::array<std::pair<ExperimentStatus, const char *>, 9> kStatusNames { {
    { ExperimentStatus::Running, "running" },
    { ExperimentStatus::Kept, "keep" },
    { ExperimentStatus::Reverted, "revert" },
    { ExperimentStatus::Failed, "fail" },
    { ExperimentStatus::Crashed, "crash" },
    { ExperimentStatus::Timeout, "timeout" },
    { ExperimentStatus::Pending, "pending" },
    { ExperimentStatus::Rejected, "reject" },
    { ExperimentStatus::Baseline, "baseline" },
} };
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
    switch (o) {
    case ExperimentOutcome::Baseline:
        return QStringLiteral("baseline");
    case ExperimentOutcome::Kept:
        return QStringLiteral("kept");
    case ExperimentOutcome::Pending:
        return QStringLiteral("pending");
    case ExperimentOutcome::Rejected:
        return QStringLiteral("rejected");
    case ExperimentOutcome::Reverted:
        return QStringLiteral("reverted");
    case ExperimentOutcome::Running:
        return QStringLiteral("running");
    case ExperimentOutcome::Failed:
        break;
    }
    return QStringLiteral("failed");
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
    for (const auto &[status, name] : kStatusNames)
        if (status == s)
            return QString::fromLatin1(name);
    return QString();
}

bool parseStatus(const QString &text, ExperimentStatus *out)
{
    for (const auto &[status, name] : kStatusNames) {
        if (text == QLatin1String(name)) {
            if (out)
                *out = status;
            return true;
        }
    }
    return false;
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
