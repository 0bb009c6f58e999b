#include "runstats.h"

#include "amdahl.h"
#include "runloader.h"

#include <QHash>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ak {

RunStats RunStats::of(const RunSnapshot &run)
{
    RunStats s;
    for (const KernelRecord &k : run.kernels)
        s.pytorchWins += run.pytorchWins(k) ? 1 : 0;
    std::vector<QDateTime> finishes;
    for (const Experiment &e : run.experiments) {
        s.tokensIn += e.tokensIn;
        s.tokensOut += e.tokensOut;
        s.cost += e.cost;
        if (e.started.isValid() && (!s.first.isValid() || e.started < s.first))
            s.first = e.started;
        if (e.finished.isValid()) {
            finishes.push_back(e.finished);
            if (!s.last.isValid() || e.finished > s.last)
                s.last = e.finished;
        }
        switch (outcomeOf(e.status)) {
        case ExperimentOutcome::Baseline:
            continue;
        case ExperimentOutcome::Kept:
            ++s.kept;
            break;
        case ExperimentOutcome::Pending:
            ++s.pending;
            break;
        case ExperimentOutcome::Reverted:
            ++s.reverted;
            break;
        case ExperimentOutcome::Rejected:
            ++s.rejected;
            break;
        case ExperimentOutcome::Running:
            ++s.running;
            s.currentKernel = e.kernel; // experiments are in id order: the newest wins
            break;
        case ExperimentOutcome::Failed:
            ++s.failed;
            break;
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

QDateTime RunStats::decidedAt(const Experiment &e)
{
    return e.finished.isValid() ? e.finished : e.started;
}

QVector<QPair<int, double>> RunStats::projectedTimeline(const RunSnapshot &run)
{
    QHash<QString, double> share;
    for (const KernelRecord &k : run.kernels)
        share.insert(KernelRecord::keyOf(k.folder), k.share);
    std::vector<const Experiment *> heads;
    for (const Experiment &e : run.experiments)
        if (e.status == ExperimentStatus::Kept || e.status == ExperimentStatus::Baseline)
            heads.push_back(&e);
    // Summed in the order the results came in, so that each point is what was known then: sorting an
    // id-order sum afterwards would give a baseline measured late the projection of keeps that came
    // after it in id but not yet in time.
    std::stable_sort(heads.begin(), heads.end(), [](const Experiment *a, const Experiment *b) {
        const QDateTime ta = decidedAt(*a), tb = decidedAt(*b);
        if (ta.isValid() != tb.isValid())
            return ta.isValid();
        if (ta.isValid() && ta != tb)
            return ta < tb;
        return a->id < b->id;
    });
    // Each kernel's part of the time saved at this point of the run (Amdahl::projectedFromSpeedups
    // as a running sum: a live window recomputes this at every reload of a run of thousands of keeps,
    // and summing every head at every keep was keeps x kernels), and the id of the head it is from.
    QHash<QString, QPair<int, double>> saving;
    double saved = 0;
    QVector<QPair<int, double>> out;
    for (const Experiment *e : heads) {
        const QString name = KernelRecord::keyOf(e->kernel);
        const auto now = saving.constFind(name);
        // An older head decided after a newer one does not replace it (the loader's head is the newest).
        if (now != saving.constEnd() && now->first > e->id)
            continue;
        // A head nobody measured projects nothing.
        const double speedup
            = e->metrics.correct && Metrics::has(e->metrics.speedup) ? e->metrics.speedup : NAN;
        const double part = Amdahl::savedShare(share.value(name), speedup);
        saved += part - (now == saving.constEnd() ? 0.0 : now->second);
        saving.insert(name, { e->id, part });
        out.append({ e->id, Amdahl::fromSavedShare(saved) });
    }
    return out;
}

QString RunStats::countsText() const
{
    const QString counts
        = QStringLiteral("%1 kept · %2 pending · %3 reverted · %4 failed · %5 rejected · %6 running")
              .arg(kept)
              .arg(pending)
              .arg(reverted)
              .arg(failed)
              .arg(rejected)
              .arg(running);
    if (pytorchWins == 0)
        return counts;
    return counts
        + (pytorchWins == 1 ? QStringLiteral(" · PyTorch wins on 1 kernel")
                            : QStringLiteral(" · PyTorch wins on %1 kernels").arg(pytorchWins));
}

} // namespace ak
