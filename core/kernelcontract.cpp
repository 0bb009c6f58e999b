#include "kernelcontract.h"

#include "jsonfield.h"

namespace ak {

namespace {

QString valueText(const nlohmann::json &v)
{
    if (v.is_string())
        return QString::fromStdString(v.get<std::string>());
    if (v.is_boolean())
        return v.get<bool>() ? QStringLiteral("yes") : QStringLiteral("no");
    if (v.is_null())
        return QStringLiteral("default");
    if (v.is_number_integer())
        return QString::number(v.get<qint64>());
    if (v.is_number())
        return QString::number(v.get<double>(), 'g', 6);
    return QString::fromStdString(v.dump());
}

} // namespace

QString KernelContract::attributesText() const
{
    QStringList parts;
    if (attrs.is_object())
        for (auto it = attrs.begin(); it != attrs.end(); ++it)
            parts << QStringLiteral("%1 %2").arg(QString::fromStdString(it.key()), valueText(it.value()));
    return parts.join(QStringLiteral(" · "));
}

QString KernelContract::coversText() const
{
    return covers.isEmpty() ? QString() : QStringLiteral("swallows: ") + covers.join(QStringLiteral(", "));
}

QString KernelContract::callableName() const
{
    const QString bare = callable.section(QLatin1Char(':'), 1);
    return (bare.isEmpty() ? callable : bare).section(QLatin1Char('.'), -1);
}

nlohmann::json KernelContract::toJson() const
{
    if (isEmpty())
        return nlohmann::json::object();
    nlohmann::json o { { "callable", callable.toStdString() }, { "attrs", attrs } };
    if (!refused.isEmpty())
        o["refused"] = refused.toStdString();
    if (!covers.isEmpty()) {
        nlohmann::json a = nlohmann::json::array();
        for (const QString &c : covers)
            a.push_back(c.toStdString());
        o["covers"] = a;
    }
    return o;
}

KernelContract KernelContract::fromJson(const nlohmann::json &o)
{
    KernelContract c;
    c.callable = jsonfield::text(o, "callable");
    if (const nlohmann::json *a = jsonfield::object(o, "attrs"))
        c.attrs = *a;
    c.refused = jsonfield::text(o, "refused");
    c.covers = jsonfield::texts(o, "covers");
    return c;
}

} // namespace ak
