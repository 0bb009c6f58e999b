#pragma once

#include "kernelrecord.h"

#include <QPair>
#include <QVector>

namespace ak {

// Amdahl's law over a profile: a kernel can only save the time it takes, and only down to its floor.
class Amdahl
{
public:
    // Sorts by time per iteration (largest first) and fills rank, share, maxSpeedup and
    // modelSpeedupAt90 (at `fraction` of the roof). Records need timeUs (per iteration), calls and
    // floorUs (per call; 0 = unknown, then no speedup is claimed: maxSpeedup 0, model speedup 1).
    static void rank(QVector<KernelRecord> &kernels, double fraction = 0.9);
    // One record's share, maxSpeedup and modelSpeedupAt90 from its timeUs, calls and floorUs, in a model
    // of `totalUs` per iteration (what rank fills; a kernel folder covering several rows fills it again
    // from their summed time).
    static void fill(KernelRecord &k, double totalUs, double fraction = 0.9);

    // Whole-model speedup if one kernel taking `kernelUs` of `totalUs` ran at `fraction` of its roof
    // (time floorUs / fraction, never slower than it is now).
    static double modelSpeedup(double totalUs, double kernelUs, double floorUs, double fraction = 0.9);

    // Whole-model speedup if the first `topK` kernels (rank order) all reached `fraction` of their roof.
    static double projectedSpeedup(const QVector<KernelRecord> &ranked, int topK, double fraction = 0.9);

    // Whole-model speedup the kernels' own measurements promise: 1 / (1 - sum share * (1 - 1/speedup))
    // over (share of the model's time, speedup of that kernel) pairs. Only speedups above 1 count: the
    // loop keeps a kernel only when it wins, so a slower one would not be put into the model.
    static double projectedFromSpeedups(const QVector<QPair<double, double>> &shareAndSpeedup);
    // Its two halves, for a running sum (RunStats::projectedTimeline): one kernel's part of the time
    // saved (0 unless share > 0 and speedup > 1; NaN fails both), and the speedup a total saving gives.
    static double savedShare(double share, double speedup);
    static double fromSavedShare(double saved);

    // Time one kernel would take at `fraction` of its roof, per iteration (its current time if that is
    // already faster, or if the floor is unknown).
    static double targetUs(const KernelRecord &k, double fraction = 0.9);
};

} // namespace ak
