#include "tunepriors.h"

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

} // namespace

QVector<TunePriors::Prior> TunePriors::forKernel(const QString &opType, const QString &architecture)
{
    QVector<Prior> out;
    QFile f(QStringLiteral(":/autokernel/resources/tune-priors.json"));
    if (!f.open(QIODevice::ReadOnly))
        return out;
    const QByteArray data = f.readAll();
    const nlohmann::json file
        = nlohmann::json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (!file.is_object() || !file.contains("priors") || !file["priors"].is_array())
        return out;
    for (const nlohmann::json &p : file["priors"]) {
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

} // namespace ak
