#include "runsnapshot.h"

#include "amdahl.h"

namespace ak {

double RunSnapshot::projectedSpeedup() const
{
    // Verify plugs each kernel's head: its best kept experiment, or the baseline starter when nothing
    // was kept (a starter can already beat PyTorch). So the projection takes the head's speedup over
    // PyTorch across the kernel's share of the time.
    QVector<QPair<double, double>> pairs;
    for (const KernelRecord &k : kernels) {
        const Experiment *head = experiment(k.headExperiment);
        if (head && head->metrics.correct && Metrics::has(head->metrics.speedup))
            pairs.append({ k.share, head->metrics.speedup });
    }
    return Amdahl::projectedFromSpeedups(pairs);
}

} // namespace ak
