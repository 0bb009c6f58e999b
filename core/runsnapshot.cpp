#include "runsnapshot.h"

#include "amdahl.h"

#include <cmath>

namespace ak {

double RunSnapshot::projectedSpeedup() const
{
    // Verify plugs each kernel's head: its best kept experiment, or the baseline starter when nothing
    // was kept (a starter can already beat PyTorch). So the projection takes the head's speedup over
    // PyTorch across the kernel's share of the time.
    QVector<QPair<double, double>> pairs;
    for (const KernelRecord &k : kernels)
        pairs.append({ k.share, headSpeedup(k) }); // NaN and slower heads count as PyTorch's own
    return Amdahl::projectedFromSpeedups(pairs);
}

double RunSnapshot::headSpeedup(const KernelRecord &k) const
{
    const Experiment *head = experiment(k.headExperiment);
    return head && head->metrics.correct && Metrics::has(head->metrics.speedup) ? head->metrics.speedup
                                                                                : std::nan("");
}

double RunSnapshot::headBestTorchSpeedup(const KernelRecord &k) const
{
    const Experiment *head = experiment(k.headExperiment);
    return head && head->metrics.correct ? head->metrics.bestTorchSpeedup() : std::nan("");
}

bool RunSnapshot::pytorchWins(const KernelRecord &k) const
{
    // Only once the kernel is done: while it is worked on, a slower head is a starting point.
    // Against the best PyTorch measured (eager or compiled): a kernel that beats eager but not
    // torch.compile is not worth plugging in.
    return k.state == KernelState::Done && headBestTorchSpeedup(k) < 1.0;
}

RunSnapshot::KeptInModel RunSnapshot::keptInModel(const ModelVerification &v) const
{
    KeptInModel out;
    for (const Experiment &e : experiments) {
        const QString name = KernelRecord::keyOf(e.kernel);
        if (outcomeOf(e.status) != ExperimentOutcome::Kept || out.kept.contains(name)
            || out.slower.contains(name))
            continue;
        const KernelRecord *k = kernel(name);
        // The head as it stands (a later keep may have overtaken this one); unmeasured counts as a win.
        const double head = k ? headSpeedup(*k) : std::nan("");
        (head < 1.0 ? out.slower : out.kept).append(name);
    }
    for (const QString &name : std::as_const(out.kept)) {
        const KernelVerification *k = v.kernel(name);
        // In the final set: verify measured it saving time there (alone, or added back, when the set
        // lost together: session 25's add + RMSNorm region, +15 % alone, -2.3 % left out of a set
        // whose rotary and attention lost); else its leave-one-out effect decides.
        if (k && (k->inFinalSet || (std::isfinite(k->effectPct) && k->effectPct > 0.0)))
            out.gains.append(name);
    }
    return out;
}

QString RunSnapshot::stateText(const KernelRecord &k) const
{
    return kernelStateText(k.state, pytorchWins(k));
}

} // namespace ak
