#pragma once

#include <QString>

namespace ak {

// Display text for the numbers the models show. Raw values travel through SortRole; these are only
// for DisplayRole and tooltips. A NaN ("not measured") is shown as an em dash, never as 0.
QString formatMicros(double us); // "812.4 µs", "3.27 ms", "1.20 s"
QString formatPercent(double fraction01); // 0.4213 -> "42.1 %"
QString formatPercentValue(double pct); // 42.13 -> "42.1 %"
QString formatSignedPercent(double pct); // 4.2 -> "+4.2 %", -1.3 -> "−1.3 %" (a true minus sign)
QString formatRatio(double ratio); // 1.314 -> "1.31×"
// A measured speedup: as formatRatio, but 3 decimals within 1 % of 1.0, where 2 would show a 0.4 %
// keep as "1.00×" (0.996 -> "0.996×").
QString formatSpeedup(double ratio);
// A result beside its gain over the kernel's starting point (both speedups over the same reference):
// (0.99, 0.978) -> "0.990× · +1.2 % vs start". Without a measured start, formatSpeedup alone.
QString formatSpeedupVsStart(double speedup, double startSpeedup);
QString formatRate(double value, const QString &unit); // "312.4 TFLOP/s"
QString notMeasured(); // "—"

} // namespace ak
