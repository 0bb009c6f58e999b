#include "amdahl.h"

#include <algorithm>
#include <limits>

namespace ak {

double Amdahl::targetUs(const KernelRecord &k, double fraction)
{
    if (k.floorUs <= 0 || fraction <= 0)
        return k.timeUs;
    const double atFraction = k.floorUs * std::max(1, k.calls) / fraction;
    return std::min(k.timeUs, atFraction);
}

double Amdahl::modelSpeedup(double totalUs, double kernelUs, double floorUs, double fraction)
{
    if (totalUs <= 0 || floorUs <= 0 || fraction <= 0)
        return 1.0;
    const double target = std::min(kernelUs, floorUs / fraction);
    return totalUs / (totalUs - kernelUs + target);
}

void Amdahl::rank(QVector<KernelRecord> &kernels, double fraction)
{
    std::stable_sort(kernels.begin(), kernels.end(),
        [](const KernelRecord &a, const KernelRecord &b) { return a.timeUs > b.timeUs; });
    double total = 0;
    for (const KernelRecord &k : kernels)
        total += k.timeUs;
    for (int i = 0; i < kernels.size(); ++i) {
        kernels[i].rank = i + 1;
        fill(kernels[i], total, fraction);
    }
}

void Amdahl::fill(KernelRecord &k, double totalUs, double fraction)
{
    k.share = totalUs > 0 ? k.timeUs / totalUs : 0.0;
    const double floorPerIteration = k.floorUs * std::max(1, k.calls);
    k.maxSpeedup = k.floorUs > 0 ? k.timeUs / floorPerIteration : 0.0;
    k.modelSpeedupAt90 = k.floorUs > 0 ? modelSpeedup(totalUs, k.timeUs, floorPerIteration, fraction) : 1.0;
}

double Amdahl::projectedSpeedup(const QVector<KernelRecord> &ranked, int topK, double fraction)
{
    double total = 0;
    for (const KernelRecord &k : ranked)
        total += k.timeUs;
    if (total <= 0)
        return 1.0;
    double saved = 0;
    for (int i = 0; i < std::min(topK, int(ranked.size())); ++i)
        saved += ranked[i].timeUs - targetUs(ranked[i], fraction);
    return total / (total - saved);
}

double Amdahl::projectedFromSpeedups(const QVector<QPair<double, double>> &shareAndSpeedup)
{
    double saved = 0;
    for (const auto &[share, speedup] : shareAndSpeedup)
        saved += savedShare(share, speedup);
    return fromSavedShare(saved);
}

double Amdahl::savedShare(double share, double speedup)
{
    return share > 0 && speedup > 1 ? share * (1.0 - 1.0 / speedup) : 0.0; // NaN (never kept) fails both
}

double Amdahl::fromSavedShare(double saved)
{
    return saved < 1.0 ? 1.0 / (1.0 - saved) : std::numeric_limits<double>::infinity();
}

} // namespace ak
