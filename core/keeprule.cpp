#include "keeprule.h"

#include <algorithm>
#include <cmath>

namespace ak {

double improvementPct(double oldLatency, double newLatency)
{
    if (std::isnan(oldLatency) || std::isnan(newLatency) || oldLatency <= 0 || newLatency <= 0)
        return std::nan("");
    return (oldLatency - newLatency) / oldLatency * 100.0;
}

bool shouldKeep(double oldLatency, double newLatency, double noisePct)
{
    const double gain = improvementPct(oldLatency, newLatency);
    if (std::isnan(gain))
        return false;
    const double noise = std::isnan(noisePct) ? 0.0 : std::abs(noisePct);
    return gain > std::max(kKeepMinImprovementPct, noise);
}

} // namespace ak
