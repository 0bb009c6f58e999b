#include "experiment.h"

#include <array>
#include <utility>

namespace ak {

namespace {
const std::array<std::pair<ExperimentStatus, const char *>, 9> kStatusNames{{
    {ExperimentStatus::Running, "running"},
    {ExperimentStatus::Kept, "keep"},
    {ExperimentStatus::Reverted, "revert"},
    {ExperimentStatus::Failed, "fail"},
    {ExperimentStatus::Crashed, "crash"},
    {ExperimentStatus::Timeout, "timeout"},
    {ExperimentStatus::Pending, "pending"},
    {ExperimentStatus::Rejected, "reject"},
    {ExperimentStatus::Baseline, "baseline"},
}};
} // namespace

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

} // namespace ak
