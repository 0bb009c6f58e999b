#pragma once

namespace ak {

// The keep rule of the loop: a candidate is kept only if it beats the current best by more than
// kKeepMinImprovementPct *and* by more than the harness's measured noise, so run-to-run jitter is
// never recorded as progress.
constexpr double kKeepMinImprovementPct = 1.0;

// (old - new) / old in percent; NaN when either latency is missing or old is not positive.
double improvementPct(double oldLatency, double newLatency);

// noisePct NaN (not measured) counts as 0: only the 1% floor applies.
bool shouldKeep(double oldLatency, double newLatency, double noisePct);

} // namespace ak
