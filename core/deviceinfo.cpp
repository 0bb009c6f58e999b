#include "deviceinfo.h"

#include <QRegularExpression>

namespace ak {

QString precisionName(Precision p)
{
    switch (p) {
    case Precision::FP32: return QStringLiteral("fp32");
    case Precision::TF32: return QStringLiteral("tf32");
    case Precision::FP16: return QStringLiteral("fp16");
    case Precision::BF16: return QStringLiteral("bf16");
    case Precision::FP8: return QStringLiteral("fp8");
    case Precision::Count: break;
    }
    return QString();
}

bool DeviceInfo::isDeviceName(const QString &name)
{
    static const QRegularExpression valid(QStringLiteral("^(cpu|cuda(:\\d+)?)$"));
    return valid.match(name).hasMatch();
}

bool parsePrecision(const QString &text, Precision *out)
{
    const QString t = text.trimmed().toLower();
    Precision p;
    if (t == QLatin1String("fp32") || t == QLatin1String("float32") || t == QLatin1String("float"))
        p = Precision::FP32;
    else if (t == QLatin1String("tf32"))
        p = Precision::TF32;
    else if (t == QLatin1String("fp16") || t == QLatin1String("float16") || t == QLatin1String("half"))
        p = Precision::FP16;
    else if (t == QLatin1String("bf16") || t == QLatin1String("bfloat16"))
        p = Precision::BF16;
    else if (t == QLatin1String("fp8") || t == QLatin1String("float8"))
        p = Precision::FP8;
    else
        return false;
    if (out)
        *out = p;
    return true;
}

QString DeviceInfo::summary() const
{
    if (!available && vendor != QLatin1String("cpu"))
        return QStringLiteral("No GPU detected");
    QString s = name;
    if (smCount > 0)
        s += QStringLiteral(" · %1 %2").arg(smCount).arg(vendor == QLatin1String("amd") ? QStringLiteral("CUs")
                                                                                       : QStringLiteral("SMs"));
    if (bandwidthGBs > 0)
        s += QStringLiteral(" · %1 TB/s").arg(bandwidthGBs / 1000.0, 0, 'f', 2);
    if (peak(Precision::BF16) > 0)
        s += QStringLiteral(" · bf16 %1 TFLOP/s").arg(peak(Precision::BF16), 0, 'f', 0);
    else if (peak(Precision::FP32) > 0)
        s += QStringLiteral(" · fp32 %1 TFLOP/s").arg(peak(Precision::FP32), 0, 'f', 2);
    if (estimated)
        s += QStringLiteral(" (estimated)");
    return s;
}

} // namespace ak
