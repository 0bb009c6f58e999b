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
QString formatRate(double value, const QString &unit); // "312.4 TFLOP/s"
QString notMeasured(); // "—"

} // namespace ak
