#include "numberformat.h"

#include <cmath>

namespace ak {

QString notMeasured()
{
    return QStringLiteral("—");
}

QString formatMicros(double us)
{
    if (std::isnan(us))
        return notMeasured();
    if (std::abs(us) >= 1e6)
        return QStringLiteral("%1 s").arg(us / 1e6, 0, 'f', 2);
    if (std::abs(us) >= 1e3)
        return QStringLiteral("%1 ms").arg(us / 1e3, 0, 'f', 2);
    return QStringLiteral("%1 µs").arg(us, 0, 'f', 1);
}

QString formatPercent(double fraction01)
{
    return std::isnan(fraction01) ? notMeasured() : formatPercentValue(fraction01 * 100.0);
}

QString formatPercentValue(double pct)
{
    if (std::isnan(pct))
        return notMeasured();
    return QStringLiteral("%1 %").arg(pct, 0, 'f', 1);
}

QString formatSignedPercent(double pct)
{
    if (std::isnan(pct))
        return notMeasured();
    const QString digits = QStringLiteral("%1 %").arg(std::abs(pct), 0, 'f', 1);
    if (digits == QLatin1String("0.0 %"))
        return digits;
    return (pct < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + digits;
}

QString formatRatio(double ratio)
{
    if (std::isnan(ratio) || ratio <= 0)
        return notMeasured();
    return QStringLiteral("%1×").arg(ratio, 0, 'f', ratio >= 100 ? 0 : 2);
}

QString formatSpeedup(double ratio)
{
    if (std::isnan(ratio) || ratio <= 0)
        return notMeasured();
    if (std::abs(ratio - 1.0) < 0.01)
        return QStringLiteral("%1×").arg(ratio, 0, 'f', 3);
    return formatRatio(ratio);
}

QString formatSpeedupVsStart(double speedup, double startSpeedup)
{
    const QString text = formatSpeedup(speedup);
    if (std::isnan(speedup) || speedup <= 0 || std::isnan(startSpeedup) || startSpeedup <= 0)
        return text;
    return QStringLiteral("%1 · %2 vs start")
        .arg(text, formatSignedPercent((speedup / startSpeedup - 1.0) * 100.0));
}

QString formatRate(double value, const QString &unit)
{
    if (std::isnan(value))
        return notMeasured();
    return QStringLiteral("%1 %2").arg(value, 0, 'f', value >= 100 ? 0 : (value >= 10 ? 1 : 2)).arg(unit);
}

} // namespace ak
