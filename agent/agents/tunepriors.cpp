#include "agents/tunepriors.h"

#include "jsonfield.h"

#include <QFile>

#include <nlohmann/json.hpp>

namespace ak {

namespace {

bool listed(const nlohmann::json &list, const QString &value)
{
    if (!list.is_array())
        return false;
    for (const nlohmann::json &v : list)
        if (v.is_string() && QString::fromStdString(v.get<std::string>()) == value)
            return true;
    return false;
}

// The compiled-in file, parsed once for the process (the agent asks at every proposal, and the
// shared-memory limit for every configuration a restart enumerates). Null when unreadable.
const nlohmann::json &file()
{
    static const nlohmann::json parsed = [] {
        QFile f(QStringLiteral(":/autokernel/resources/tune-priors.json"));
        if (!f.open(QIODevice::ReadOnly))
            return nlohmann::json();
        const QByteArray data = f.readAll();
        const nlohmann::json j
            = nlohmann::json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
        return j.is_object() ? j : nlohmann::json();
    }();
    return parsed;
}

} // namespace

QVector<TunePriors::Prior> TunePriors::forKernel(const QString &opType, const QString &architecture)
{
    QVector<Prior> out;
    const nlohmann::json &priors = file().value("priors", nlohmann::json());
    if (!priors.is_array())
        return out;
    for (const nlohmann::json &p : priors) {
        if (!p.is_object() || !listed(p.value("op", nlohmann::json()), opType)
            || !listed(p.value("arch", nlohmann::json()), architecture) || !p.contains("config")
            || !p["config"].is_object())
            continue;
        Prior prior;
        for (auto it = p["config"].begin(); it != p["config"].end(); ++it)
            if (it->is_number())
                prior.config.insert(QString::fromStdString(it.key()), it->get<double>());
        prior.why = jsonfield::text(p, "why");
        if (!prior.config.isEmpty())
            out.append(prior);
    }
    return out;
}

bool TunePriors::apply(
    const TuneConfig &prior, const TuneSpace &space, const TuneConfig &base, TuneConfig *out)
{
    TuneConfig c = base;
    bool any = false;
    for (int a = 0; a < space.axes().size(); ++a) {
        const QString &name = space.axes().at(a).name;
        const auto it = prior.constFind(name);
        if (it == prior.constEnd() || space.indexOf(a, it.value()) < 0)
            continue;
        c.insert(name, it.value());
        any = true;
    }
    *out = c;
    return any;
}

double TunePriors::sharedMemoryKiB(const DeviceInfo &device)
{
    if (device.vendor == QLatin1String("cpu") || device.vendor.isEmpty())
        return 0;
    const nlohmann::json &table = file().value("shared_memory_kib", nlohmann::json());
    if (!table.is_object())
        return 0;
    const std::string key = device.vendor == QLatin1String("amd")
        ? std::string("amd")
        : device.computeCapability.trimmed().toStdString();
    const auto it = table.find(key);
    return it != table.end() && it->is_number() ? it->get<double>() : 0;
}

bool TunePriors::hasTensorDescriptors(const DeviceInfo &device)
{
    if (device.vendor == QLatin1String("cpu") || device.vendor == QLatin1String("amd"))
        return false;
    return device.computeCapability.section(QLatin1Char('.'), 0, 0).toInt() >= 9;
}

bool TunePriors::fitsSharedMemory(const TuneConfig &config, double limitKiB, const QString &dtype,
    const QString &opType, bool tensorDescriptors)
{
    const QString m = QStringLiteral("BLOCK_M"), n = QStringLiteral("BLOCK_N"), k = QStringLiteral("BLOCK_K");
    if (limitKiB <= 0 || !config.contains(m) || !config.contains(n) || !config.contains(k))
        return true;
    const QString d = dtype.toLower();
    const double bytes = d.contains(QLatin1String("fp8")) || d.contains(QLatin1String("int8")) ? 1
        : d.contains(QLatin1String("32"))                                                      ? 4
                                                                                               : 2;
    const double stages = config.value(QStringLiteral("NUM_STAGES"), 1);
    const double weightTiles = opType == QLatin1String("fused_mlp") ? 2 : 1; // gate and up
    const double outputTile = tensorDescriptors && config.value(QStringLiteral("TMA"), 0) > 0
        ? config.value(m) * config.value(n) * bytes
        : 0;
    const double need = stages
            * (config.value(m) * config.value(k) + weightTiles * config.value(k) * config.value(n)) * bytes
        + outputTile;
    return need <= limitKiB * 1024;
}

} // namespace ak
