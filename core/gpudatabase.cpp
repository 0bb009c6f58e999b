#include "gpudatabase.h"

#include "jsonfield.h"

#include <QFile>
#include <QRegularExpression>

#include <nlohmann/json.hpp>

namespace ak {

namespace {

using Json = nlohmann::json;

const Precision kPrecisions[]
    = { Precision::FP32, Precision::TF32, Precision::FP16, Precision::BF16, Precision::FP8 };

bool readPeaks(
    const Json &obj, const QString &where, std::array<double, int(Precision::Count)> *out, QString *message)
{
    if (!obj.is_object()) {
        *message = where + QStringLiteral(": must be an object");
        return false;
    }
    for (Precision p : kPrecisions) {
        const std::optional<double> peak
            = jsonfield::strict::number(obj, precisionName(p).toStdString().c_str());
        if (!peak || *peak < 0) {
            *message
                = where + QStringLiteral(".%1: missing or not a non-negative number").arg(precisionName(p));
            return false;
        }
        (*out)[size_t(p)] = *peak;
    }
    return true;
}

} // namespace

const GpuDatabase &GpuDatabase::builtin()
{
    static const GpuDatabase db = [] {
        GpuDatabase d;
        QFile f(QStringLiteral(":/autokernel/gpus.json"));
        if (!f.open(QIODevice::ReadOnly))
            d.m_error = QStringLiteral(":/autokernel/gpus.json: resource missing from the build");
        else
            d.load(f.readAll());
        return d;
    }();
    return db;
}

bool GpuDatabase::fail(const QString &message, QString *error)
{
    m_valid = false;
    m_error = QStringLiteral("gpus.json: ") + message;
    if (error)
        *error = m_error;
    return false;
}

bool GpuDatabase::load(const QByteArray &json, QString *error)
{
    m_entries.clear();
    m_perSm.clear();
    m_variantTokens.clear();
    const Json root = Json::parse(json.constData(), json.constData() + json.size(), nullptr, false);
    if (root.is_discarded() || !root.is_object())
        return fail(QStringLiteral("not valid JSON"), error);
    const auto gpus = root.find("gpus");
    if (gpus == root.end() || !gpus->is_array())
        return fail(QStringLiteral("'gpus' must be an array"), error);
    QString message;
    for (size_t i = 0; i < gpus->size(); ++i) {
        const Json &g = (*gpus)[i];
        const QString where = QStringLiteral("gpus[%1]").arg(i);
        Entry e;
        e.key = jsonfield::text(g, "key");
        e.name = jsonfield::text(g, "name");
        e.vendor = jsonfield::text(g, "vendor");
        e.arch = jsonfield::text(g, "arch");
        e.source = jsonfield::text(g, "source");
        if (e.key.isEmpty() || e.name.isEmpty() || e.source.isEmpty())
            return fail(where + QStringLiteral(": needs key, name and source"), error);
        e.smCount = int(jsonfield::number(g, "sm_count", 0));
        e.boostClockMHz = jsonfield::number(g, "boost_clock_mhz", 0);
        e.memoryGiB = jsonfield::number(g, "memory_gib", 0);
        e.memoryBusBits = int(jsonfield::number(g, "memory_bus_bits", 0));
        e.bandwidthGBs = jsonfield::number(g, "bandwidth_gbs", 0);
        e.l2MiB = jsonfield::number(g, "l2_mib", 0);
        if (e.smCount <= 0 || e.boostClockMHz <= 0 || e.bandwidthGBs <= 0)
            return fail(where
                    + QStringLiteral(" (%1): sm_count, boost_clock_mhz and bandwidth_gbs must be > 0")
                          .arg(e.key),
                error);
        const auto peaks = g.find("peak_tflops");
        if (peaks == g.end()
            || !readPeaks(*peaks, where + QStringLiteral(".peak_tflops"), &e.peakTflops, &message))
            return fail(message.isEmpty() ? where + QStringLiteral(".peak_tflops: missing") : message, error);
        const auto aliases = g.find("aliases");
        if (aliases == g.end() || !aliases->is_array() || aliases->empty())
            return fail(where + QStringLiteral(".aliases: needs at least one"), error);
        for (const Json &a : *aliases) {
            if (a.is_string())
                e.aliases.push_back(tokens(QString::fromStdString(a.get<std::string>())));
        }
        m_entries.push_back(e);
    }
    for (const QString &t : jsonfield::texts(root, "variant_tokens"))
        m_variantTokens << t.toLower();
    if (const Json *per = jsonfield::object(root, "per_sm_flops_per_clock")) {
        for (auto it = per->begin(); it != per->end(); ++it) {
            std::array<double, int(Precision::Count)> flops {};
            const QString arch = QString::fromStdString(it.key());
            if (!readPeaks(it.value(), QStringLiteral("per_sm_flops_per_clock.") + arch, &flops, &message))
                return fail(message, error);
            m_perSm.insert(arch, flops);
        }
    }
    m_valid = true;
    m_error.clear();
    return true;
}

const GpuDatabase::Entry *GpuDatabase::byKey(const QString &key) const
{
    for (const Entry &e : m_entries) {
        if (e.key == key)
            return &e;
    }
    return nullptr;
}

QStringList GpuDatabase::tokens(const QString &deviceName)
{
    static const QRegularExpression nonAlnum(QStringLiteral("[^a-z0-9]+"));
    static const QStringList vendorWords
        = { QStringLiteral("nvidia"), QStringLiteral("amd"), QStringLiteral("geforce"),
              QStringLiteral("instinct"), QStringLiteral("tesla"), QStringLiteral("radeon") };
    QStringList out;
    const QStringList parts = deviceName.toLower().split(nonAlnum, Qt::SkipEmptyParts);
    for (const QString &t : parts) {
        if (!vendorWords.contains(t))
            out << t;
    }
    return out;
}

const GpuDatabase::Entry *GpuDatabase::lookup(const QString &deviceName) const
{
    const QStringList name = tokens(deviceName);
    const Entry *best = nullptr;
    int bestTokens = 0;
    for (const Entry &e : m_entries) {
        for (const QStringList &alias : e.aliases) {
            bool all = !alias.isEmpty();
            for (const QString &t : alias)
                all = all && name.contains(t);
            if (!all)
                continue;
            bool variantMismatch = false;
            for (const QString &t : name)
                variantMismatch = variantMismatch || (m_variantTokens.contains(t) && !alias.contains(t));
            if (!variantMismatch && alias.size() > bestTokens) {
                best = &e;
                bestTokens = int(alias.size());
            }
        }
    }
    return best;
}

double GpuDatabase::bandwidthFromBus(int busBits, double memoryClockMHz)
{
    if (busBits <= 0 || memoryClockMHz <= 0)
        return 0;
    // bits x MHz x 2 transfers per clock / 8 bits per byte = MB/s; / 1000 = GB/s.
    return double(busBits) * memoryClockMHz * 2.0 / 8.0 / 1000.0;
}

const std::array<double, int(Precision::Count)> *GpuDatabase::perSmFlops(const QString &arch) const
{
    QString a = arch.trimmed().toLower();
    if (a.startsWith(QLatin1String("gfx")))
        a = a.section(QLatin1Char(':'), 0, 0); // torch reports "gfx942:sramecc+:xnack-"
    const auto it = m_perSm.constFind(a);
    return it == m_perSm.constEnd() ? nullptr : &it.value();
}

DeviceInfo GpuDatabase::toDevice(const Entry &e)
{
    DeviceInfo d;
    d.available = true;
    d.name = e.name;
    d.vendor = e.vendor;
    d.detectedBy = QStringLiteral("database");
    d.databaseKey = e.key;
    d.computeCapability = e.arch;
    d.smCount = e.smCount;
    d.boostClockMHz = e.boostClockMHz;
    d.memoryBusWidthBits = e.memoryBusBits;
    d.memoryGiB = e.memoryGiB;
    d.l2MiB = e.l2MiB;
    d.bandwidthGBs = e.bandwidthGBs;
    d.peakTflops = e.peakTflops;
    d.note = e.source;
    return d;
}

DeviceInfo GpuDatabase::complete(DeviceInfo d) const
{
    if (const Entry *e = lookup(d.name)) {
        // Peaks and bandwidth come from the datasheet; what the hardware reported is kept.
        d.databaseKey = e->key;
        d.peakTflops = e->peakTflops;
        d.bandwidthGBs = e->bandwidthGBs;
        d.estimated = false;
        if (d.vendor.isEmpty())
            d.vendor = e->vendor;
        if (d.computeCapability.isEmpty())
            d.computeCapability = e->arch;
        if (d.smCount <= 0)
            d.smCount = e->smCount;
        if (d.boostClockMHz <= 0)
            d.boostClockMHz = e->boostClockMHz;
        if (d.l2MiB <= 0)
            d.l2MiB = e->l2MiB;
        if (d.memoryGiB <= 0)
            d.memoryGiB = e->memoryGiB;
        d.note = QStringLiteral("peaks from the GPU database (%1): %2").arg(e->key, e->source);
        return d;
    }
    d.databaseKey.clear();
    d.estimated = true;
    QStringList missing;
    const double bw = bandwidthFromBus(d.memoryBusWidthBits, d.memoryClockMHz);
    if (bw > 0)
        d.bandwidthGBs = bw;
    else if (d.bandwidthGBs <= 0)
        missing << QStringLiteral("bandwidth (no bus width / memory clock)");
    const auto *perSm = perSmFlops(d.computeCapability);
    if (perSm && d.smCount > 0 && d.boostClockMHz > 0) {
        for (Precision p : kPrecisions)
            d.peakTflops[size_t(p)] = (*perSm)[size_t(p)] * d.smCount * d.boostClockMHz * 1e6 / 1e12;
    } else {
        d.peakTflops = {};
        missing << QStringLiteral(
            "peak FLOP/s (architecture '%1' not in the per-SM table, or no SM count / clock)")
                       .arg(d.computeCapability);
    }
    d.note = QStringLiteral(
        "'%1' is not in the GPU database: estimated from SM count x per-SM throughput x clock "
        "and bus width x memory clock")
                 .arg(d.name);
    if (!missing.isEmpty())
        d.note += QStringLiteral("; unknown: ") + missing.join(QStringLiteral(", "));
    return d;
}

} // namespace ak
