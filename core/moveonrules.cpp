#include "moveonrules.h"

#include "enumnames.h"

#include <QFile>
#include <QSaveFile>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <cmath>

namespace ak {

namespace {

using json = nlohmann::json;

const char *const kReverts = "max_consecutive_reverts";
const char *const kRoof = "roof_pct";
const char *const kHours = "hours_per_kernel";
const char *const kSpeedup = "speedup_over_baseline";
const char *const kMisses = "max_in_model_misses";

QString fieldError(const char *field, const QString &what, const json &value)
{
    return QStringLiteral("move-on rules: %1 %2 (got %3)")
        .arg(QLatin1String(field), what, QString::fromStdString(value.dump()));
}

} // namespace

QByteArray MoveOnRules::toJson() const
{
    const json j = { { kReverts, maxConsecutiveReverts }, { kRoof, roofPct }, { kHours, hoursPerKernel },
        { kSpeedup, speedupOverBaseline }, { kMisses, maxInModelMisses } };
    return QByteArray::fromStdString(j.dump(2)) + '\n';
}

bool MoveOnRules::fromJson(const QByteArray &text, MoveOnRules *out, QString *error)
{
    QString err;
    MoveOnRules r;
    json j;
    try {
        j = json::parse(text.toStdString());
    } catch (const json::parse_error &e) {
        err = QStringLiteral("move-on rules: not valid JSON: %1").arg(QString::fromUtf8(e.what()));
    }
    if (err.isEmpty() && !j.is_object())
        err = QStringLiteral("move-on rules: expected a JSON object");
    for (auto it = err.isEmpty() ? j.begin() : j.end(); it != j.end() && err.isEmpty(); ++it) {
        const std::string &key = it.key();
        const json &v = it.value();
        if (key == kReverts) {
            if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1000000)
                err = fieldError(kReverts, QStringLiteral("must be a whole number >= 0 (0 = off)"), v);
            else
                r.maxConsecutiveReverts = v.get<int>();
        } else if (key == kRoof) {
            if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 100)
                err = fieldError(kRoof, QStringLiteral("must be a percentage in [0, 100] (0 = off)"), v);
            else if (v.get<double>() > 0 && v.get<double>() <= 1)
                err = fieldError(kRoof, QStringLiteral("is a percentage, not a fraction (90 means 90%)"), v);
            else
                r.roofPct = v.get<double>();
        } else if (key == kHours) {
            if (!v.is_number() || v.get<double>() < 0 || !std::isfinite(v.get<double>()))
                err = fieldError(kHours, QStringLiteral("must be a number of hours >= 0 (0 = off)"), v);
            else
                r.hoursPerKernel = v.get<double>();
        } else if (key == kSpeedup) {
            if (!v.is_number() || !(v.get<double>() == 0 || v.get<double>() > 1))
                err = fieldError(kSpeedup, QStringLiteral("must be a factor > 1 (0 = off)"), v);
            else
                r.speedupOverBaseline = v.get<double>();
        } else if (key == kMisses) {
            if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1000000)
                err = fieldError(kMisses, QStringLiteral("must be a whole number >= 0 (0 = off)"), v);
            else
                r.maxInModelMisses = v.get<int>();
        } else {
            err = QStringLiteral("move-on rules: unknown field \"%1\" (known: %2, %3, %4, %5, %6)")
                      .arg(QString::fromStdString(key), QLatin1String(kReverts), QLatin1String(kRoof),
                          QLatin1String(kHours), QLatin1String(kSpeedup), QLatin1String(kMisses));
        }
    }
    if (error)
        *error = err;
    if (!err.isEmpty())
        return false;
    if (out)
        *out = r;
    return true;
}

bool MoveOnRules::save(const QString &path, QString *error) const
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(toJson()) < 0 || !f.commit()) {
        if (error)
            *error = QStringLiteral("%1: cannot write: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

bool MoveOnRules::load(const QString &path, MoveOnRules *out, QString *error)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("%1: cannot read: %2").arg(path, f.errorString());
        return false;
    }
    QString err;
    if (!fromJson(f.readAll(), out, &err)) {
        if (error)
            *error = path + QStringLiteral(": ") + err;
        return false;
    }
    return true;
}

QString MoveOnRules::summary() const
{
    const QString reverts = maxConsecutiveReverts > 0
        ? (maxConsecutiveReverts == 1 ? QStringLiteral("1 revert in a row")
                                      : QStringLiteral("%1 reverts in a row").arg(maxConsecutiveReverts))
        : QStringLiteral("no revert limit");
    const QString roof = roofPct > 0 ? QStringLiteral("%1% of roof").arg(roofPct, 0, 'g', 4)
                                     : QStringLiteral("no roof goal");
    const QString speedup = speedupOverBaseline > 0
        ? QStringLiteral("%1x over baseline").arg(speedupOverBaseline, 0, 'g', 4)
        : QStringLiteral("no speedup goal");
    const QString hours = hoursPerKernel > 0
        ? QStringLiteral("%1 h per kernel").arg(hoursPerKernel, 0, 'g', 4)
        : QStringLiteral("no time limit");
    const QString misses = maxInModelMisses > 0
        ? (maxInModelMisses == 1 ? QStringLiteral("1 miss in the model")
                                 : QStringLiteral("%1 misses in the model").arg(maxInModelMisses))
        : QStringLiteral("no in-model rule");
    return QStringList { reverts, roof, speedup, hours, misses }.join(QStringLiteral(", "));
}

bool MoveOnRules::operator==(const MoveOnRules &o) const
{
    return maxConsecutiveReverts == o.maxConsecutiveReverts && roofPct == o.roofPct
        && hoursPerKernel == o.hoursPerKernel && speedupOverBaseline == o.speedupOverBaseline
        && maxInModelMisses == o.maxInModelMisses;
}

namespace {
// The log's names of why a kernel was moved on from.
constexpr EnumToken<MoveOnReason> kMoveOnReasonNames[] = {
    { MoveOnReason::None, "none" },
    { MoveOnReason::NearRoof, "near_roof" },
    { MoveOnReason::SpeedupReached, "speedup_reached" },
    { MoveOnReason::ConsecutiveReverts, "consecutive_reverts" },
    { MoveOnReason::TimeBudget, "time_budget" },
    { MoveOnReason::NotInModel, "not_in_model" },
};
} // namespace

QString moveOnReasonName(MoveOnReason r)
{
    return tokenOf(kMoveOnReasonNames, r);
}

MoveOnDecision evaluate(const MoveOnRules &rules, const KernelProgress &k)
{
    MoveOnDecision d;
    auto fire = [&d](MoveOnReason reason, const QString &why) {
        d.moveOn = true;
        d.reason = reason;
        d.explanation = why;
        return d;
    };
    if (rules.roofPct > 0 && !std::isnan(k.bestPctPeak) && k.bestPctPeak >= rules.roofPct)
        return fire(MoveOnReason::NearRoof,
            QStringLiteral("best %1% of roof >= %2%")
                .arg(k.bestPctPeak, 0, 'f', 1)
                .arg(rules.roofPct, 0, 'g', 4));
    if (rules.speedupOverBaseline > 0 && !std::isnan(k.bestSpeedup)
        && k.bestSpeedup >= rules.speedupOverBaseline)
        return fire(MoveOnReason::SpeedupReached,
            QStringLiteral("best %1x over baseline >= %2x")
                .arg(k.bestSpeedup, 0, 'f', 2)
                .arg(rules.speedupOverBaseline, 0, 'g', 4));
    // A give-up rule: the harness keeps winning, the model does not show it (#38 item 5).
    if (rules.maxInModelMisses > 0 && k.inModelMisses >= rules.maxInModelMisses)
        return fire(MoveOnReason::NotInModel,
            QStringLiteral("%1 kept harness win(s) in a row showed no gain in the model")
                .arg(k.inModelMisses));
    if (rules.maxConsecutiveReverts > 0 && k.consecutiveReverts >= rules.maxConsecutiveReverts)
        return fire(MoveOnReason::ConsecutiveReverts,
            QStringLiteral("%1 consecutive reverts").arg(k.consecutiveReverts));
    if (rules.hoursPerKernel > 0 && k.started.isValid() && k.now.isValid()) {
        const double hours = double(k.started.msecsTo(k.now)) / 3.6e6;
        if (hours >= rules.hoursPerKernel)
            return fire(MoveOnReason::TimeBudget,
                QStringLiteral("%1 h on this kernel >= %2 h")
                    .arg(hours, 0, 'f', 2)
                    .arg(rules.hoursPerKernel, 0, 'g', 4));
    }
    return d;
}

} // namespace ak
