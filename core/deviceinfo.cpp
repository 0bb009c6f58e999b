#include "deviceinfo.h"

#include "enumnames.h"
#include "jsonfield.h"

#include <nlohmann/json.hpp>

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>

namespace ak {

namespace {
// run.json's, the judge's and torch's spellings; the first of each value is its name.
constexpr EnumToken<Precision> kPrecisionNames[] = {
    { Precision::FP32, "fp32" },
    { Precision::FP32, "float32" },
    { Precision::FP32, "float" },
    { Precision::TF32, "tf32" },
    { Precision::FP16, "fp16" },
    { Precision::FP16, "float16" },
    { Precision::FP16, "half" },
    { Precision::BF16, "bf16" },
    { Precision::BF16, "bfloat16" },
    { Precision::FP8, "fp8" },
    { Precision::FP8, "float8" },
};
} // namespace

QString precisionName(Precision p)
{
    return tokenOf(kPrecisionNames, p);
}

bool DeviceInfo::isDeviceName(const QString &name)
{
    static const QRegularExpression valid(QStringLiteral("^(cpu|cuda(:\\d+)?)$"));
    return valid.match(name).hasMatch();
}

bool parsePrecision(const QString &text, Precision *out)
{
    return fromToken(kPrecisionNames, text.trimmed().toLower(), out);
}

QString DeviceInfo::summary() const
{
    if (!available && vendor != QLatin1String("cpu"))
        return QStringLiteral("No GPU detected");
    QString s = name;
    if (smCount > 0)
        s += QStringLiteral(" · %1 %2")
                 .arg(smCount)
                 .arg(vendor == QLatin1String("amd") ? QStringLiteral("CUs") : QStringLiteral("SMs"));
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

DeviceInfo DeviceInfo::fromJson(const nlohmann::json &o)
{
    DeviceInfo d;
    if (!o.is_object())
        return d;
    d.available = jsonfield::boolean(o, "available", false);
    d.name = jsonfield::text(o, "name");
    d.vendor = jsonfield::text(o, "vendor");
    d.detectedBy = jsonfield::text(o, "detected_by");
    d.databaseKey = jsonfield::text(o, "database_key");
    d.computeCapability = jsonfield::text(o, "compute_capability");
    d.smCount = int(jsonfield::number(o, "sm_count", 0));
    d.boostClockMHz = jsonfield::number(o, "boost_clock_mhz", 0);
    d.memoryClockMHz = jsonfield::number(o, "memory_clock_mhz", 0);
    d.memoryBusWidthBits = int(jsonfield::number(o, "memory_bus_width_bits", 0));
    d.memoryGiB = jsonfield::number(o, "memory_gib", 0);
    d.l2MiB = jsonfield::number(o, "l2_mib", 0);
    d.bandwidthGBs = jsonfield::number(o, "bandwidth_gbs", 0);
    if (const nlohmann::json *p = jsonfield::object(o, "peak_tflops")) {
        for (auto it = p->begin(); it != p->end(); ++it) {
            Precision prec;
            if (it->is_number() && parsePrecision(QString::fromStdString(it.key()), &prec))
                d.peakTflops[size_t(prec)] = it->get<double>();
        }
    }
    d.estimated = jsonfield::boolean(o, "estimated", false);
    d.note = jsonfield::text(o, "note");
    if (const nlohmann::json *m = jsonfield::object(o, "measured_roofs"))
        d.measured = MeasuredRoofs::fromJson(*m);
    return d;
}

nlohmann::json DeviceInfo::toJson() const
{
    nlohmann::json peaks = nlohmann::json::object();
    for (int i = 0; i < int(Precision::Count); ++i)
        peaks[precisionName(Precision(i)).toStdString()] = peakTflops[size_t(i)];
    nlohmann::json o { { "available", available }, { "name", name.toStdString() },
        { "vendor", vendor.toStdString() }, { "detected_by", detectedBy.toStdString() },
        { "database_key", databaseKey.toStdString() },
        { "compute_capability", computeCapability.toStdString() }, { "sm_count", smCount },
        { "boost_clock_mhz", boostClockMHz }, { "memory_clock_mhz", memoryClockMHz },
        { "memory_bus_width_bits", memoryBusWidthBits }, { "memory_gib", memoryGiB }, { "l2_mib", l2MiB },
        { "bandwidth_gbs", bandwidthGBs }, { "peak_tflops", peaks }, { "estimated", estimated },
        { "note", note.toStdString() } };
    if (measured.known())
        o["measured_roofs"] = measured.toJson();
    return o;
}

bool MeasuredRoofs::known() const
{
    return bandwidthGBs > 0 || std::any_of(tflops.begin(), tflops.end(), [](double t) { return t > 0; });
}

QString MeasuredRoofs::summary() const
{
    if (!known())
        return QStringLiteral("not measured");
    QStringList parts;
    if (bandwidthGBs > 0)
        parts << QStringLiteral("copy %1 GB/s").arg(bandwidthGBs, 0, 'f', bandwidthGBs < 100 ? 1 : 0);
    for (int i = 0; i < int(Precision::Count); ++i)
        if (tflops[size_t(i)] > 0)
            parts << QStringLiteral("%1 matmul %2 TFLOP/s")
                         .arg(precisionName(Precision(i)))
                         .arg(tflops[size_t(i)], 0, 'g', 4);
    QString s = parts.join(QStringLiteral(" · "));
    if (!measuredAt.isEmpty())
        s += QStringLiteral(" (measured %1%2)")
                 .arg(measuredAt, cached ? QStringLiteral(", cached") : QString());
    return s;
}

MeasuredRoofs MeasuredRoofs::fromJson(const nlohmann::json &o)
{
    MeasuredRoofs m;
    if (!o.is_object())
        return m;
    m.bandwidthGBs = jsonfield::number(o, "bandwidth_gbs", 0);
    if (const nlohmann::json *t = jsonfield::object(o, "tflops")) {
        for (auto it = t->begin(); it != t->end(); ++it) {
            Precision prec;
            if (it->is_number() && parsePrecision(QString::fromStdString(it.key()), &prec))
                m.tflops[size_t(prec)] = it->get<double>();
        }
    }
    m.key = jsonfield::text(o, "key");
    m.measuredAt = jsonfield::text(o, "measured_at");
    m.cached = jsonfield::boolean(o, "cached", false);
    return m;
}

nlohmann::json MeasuredRoofs::toJson() const
{
    nlohmann::json t = nlohmann::json::object();
    for (int i = 0; i < int(Precision::Count); ++i)
        if (tflops[size_t(i)] > 0)
            t[precisionName(Precision(i)).toStdString()] = tflops[size_t(i)];
    return { { "bandwidth_gbs", bandwidthGBs }, { "tflops", t }, { "key", key.toStdString() },
        { "measured_at", measuredAt.toStdString() } };
}

} // namespace ak
