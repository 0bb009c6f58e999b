#include "runstats.h"

#include <algorithm>
#include <vector>

namespace ak {

RunStats RunStats::of(const RunSnapshot &run)
{
    RunStats s;
    std::vector<QDateTime> finishes;
    for (const Experiment &e : run.experiments) {
        if (e.started.isValid() && (!s.first.isValid() || e.started < s.first))
            s.first = e.started;
        if (e.finished.isValid()) {
            finishes.push_back(e.finished);
            if (!s.last.isValid() || e.finished > s.last)
                s.last = e.finished;
        }
        switch (e.status) {
        case ExperimentStatus::Baseline: continue;
        case ExperimentStatus::Kept: ++s.kept; break;
        case ExperimentStatus::Pending: ++s.pending; break;
        case ExperimentStatus::Reverted: ++s.reverted; break;
        case ExperimentStatus::Rejected: ++s.rejected; break;
        case ExperimentStatus::Running:
            ++s.running;
            s.currentKernel = e.kernel;     // experiments are in id order: the newest wins
            break;
        case ExperimentStatus::Failed:
        case ExperimentStatus::Crashed:
        case ExperimentStatus::Timeout: ++s.failed; break;
        }
        ++s.attempts;
    }
    if (s.last.isValid()) {
        const QDateTime from = s.last.addSecs(-60 * RateWindowMinutes);
        int n = 0;
        QDateTime earliest = s.last;
        for (const QDateTime &t : finishes)
            if (t >= from) {
                ++n;
                earliest = std::min(earliest, t);
            }
        const double hours = earliest.msecsTo(s.last) / 3.6e6;
        if (n >= 2 && hours > 0)
            s.perHour = (n - 1) / hours;
    }
    return s;
}

QString RunStats::countsText() const
{
    return QStringLiteral("%1 kept · %2 pending · %3 reverted · %4 failed · %5 rejected · %6 running")
        .arg(kept)
        .arg(pending)
        .arg(reverted)
        .arg(failed)
        .arg(rejected)
        .arg(running);
}

} // namespace ak
