#include "inmodelcheck.h"

#include "jsonfield.h"

#include <algorithm>

namespace ak {

namespace {

using json = nlohmann::json;

// NaN is written as null (JSON has no NaN) and read back as NaN.
json number(double x)
{
    return std::isfinite(x) ? json(x) : json(nullptr);
}

} // namespace

std::optional<InModelCheck> InModelCheck::fromReply(const json &r, QString *error)
{
    InModelCheck c;
    jsonfield::Problem problem;
    const std::optional<QString> kernel = jsonfield::strict::text(r, "kernel", &problem);
    if (!kernel || kernel->isEmpty()) {
        *error = QStringLiteral("in-model check: ")
            + (kernel ? QStringLiteral("\"kernel\" is empty") : problem.message());
        return std::nullopt;
    }
    c.kernel = *kernel;
    c.experiment = int(jsonfield::integer(r, "experiment", 0));
    c.blobSha256 = jsonfield::text(r, "blob_sha256");
    c.when = QDateTime::fromString(jsonfield::text(r, "when"), Qt::ISODate);
    c.device = jsonfield::text(r, "device");
    c.plugged = jsonfield::boolean(r, "plugged", false);
    const json *parity = jsonfield::object(r, "parity");
    c.parityOk = parity && jsonfield::boolean(*parity, "ok", false);
    c.effectPct = jsonfield::number(r, "effect_pct", std::nan(""));
    c.limitPct = jsonfield::number(r, "limit_pct", std::nan(""));
    // Recomputed, not trusted: a check that was not timed is never positive.
    c.positive = c.plugged && c.parityOk && std::isfinite(c.effectPct) && std::isfinite(c.limitPct)
        && c.effectPct > c.limitPct;
    c.harnessSpeedup = jsonfield::number(r, "harness_speedup", std::nan(""));
    c.harnessWin = jsonfield::boolean(r, "harness_win", c.harnessSpeedup > 1.0);
    c.expectedPct = jsonfield::number(r, "expected_pct", std::nan(""));
    c.why = jsonfield::text(r, "why");
    c.seconds = jsonfield::number(r, "seconds", std::nan(""));
    return c;
}

json InModelCheck::toJson() const
{
    return json { { "kernel", kernel.toStdString() }, { "experiment", experiment },
        { "blob_sha256", blobSha256.toStdString() },
        { "when", when.toUTC().toString(Qt::ISODate).toStdString() }, { "device", device.toStdString() },
        { "plugged", plugged }, { "parity", { { "ok", parityOk } } }, { "effect_pct", number(effectPct) },
        { "limit_pct", number(limitPct) }, { "positive", positive }, { "harness_win", harnessWin },
        { "harness_speedup", number(harnessSpeedup) }, { "expected_pct", number(expectedPct) },
        { "why", why.toStdString() }, { "seconds", number(seconds) } };
}

QString InModelCheck::summary() const
{
    const QString keep = QStringLiteral(", keep #%1").arg(experiment);
    if (!std::isfinite(effectPct))
        return (why.isEmpty() ? QStringLiteral("not timed") : why) + keep;
    return QStringLiteral("%1%2% alone vs eager (noise %3%)%4%5")
        .arg(effectPct >= 0 ? QStringLiteral("+") : QString())
        .arg(effectPct, 0, 'f', 2)
        .arg(limitPct, 0, 'f', 2)
        .arg(positive ? QString() : QStringLiteral(", no gain in the model"), keep);
}

const InModelCheck *InModelChecks::latest(const QString &kernel) const
{
    for (auto it = checks.crbegin(); it != checks.crend(); ++it)
        if (it->kernel == kernel)
            return &*it;
    return nullptr;
}

int InModelChecks::count(const QString &kernel) const
{
    return int(std::count_if(
        checks.cbegin(), checks.cend(), [&kernel](const InModelCheck &c) { return c.kernel == kernel; }));
}

int InModelChecks::missesInARow(const QString &kernel) const
{
    int misses = 0;
    for (auto it = checks.crbegin(); it != checks.crend(); ++it) {
        if (it->kernel != kernel || !it->visibleWin())
            continue;
        if (it->positive)
            break;
        ++misses;
    }
    return misses;
}

double InModelChecks::seconds() const
{
    double total = 0;
    for (const InModelCheck &c : checks)
        if (std::isfinite(c.seconds))
            total += c.seconds;
    return total;
}

json InModelChecks::toJson() const
{
    json list = json::array();
    for (const InModelCheck &c : checks)
        list.push_back(c.toJson());
    return json { { "format", "autokernel-inmodel" }, { "version", 1 }, { "checks", list } };
}

InModelChecks InModelChecks::parse(const QByteArray &data, const QString &fileName, QStringList *warnings)
{
    InModelChecks out;
    const json j = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (!j.is_object() || j.value("format", "") != "autokernel-inmodel") {
        *warnings << QStringLiteral(
            "%1: not an in-model check file (\"format\" is not \"autokernel-inmodel\")")
                         .arg(fileName);
        return out;
    }
    const json *list = jsonfield::array(j, "checks");
    if (!list) {
        *warnings << QStringLiteral("%1: \"checks\" is not a list").arg(fileName);
        return out;
    }
    for (size_t i = 0; i < list->size(); ++i) {
        QString error;
        if (std::optional<InModelCheck> c = InModelCheck::fromReply((*list)[i], &error))
            out.checks.push_back(*c);
        else
            *warnings << QStringLiteral("%1: checks[%2]: %3").arg(fileName).arg(i).arg(error);
    }
    return out;
}

} // namespace ak
