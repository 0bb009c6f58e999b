#include "steerrequest.h"

#include "enumnames.h"
#include "errorout.h"
#include "jsonfield.h"

using nlohmann::json;

namespace ak {

namespace {

// The names are the queued files' "action" values: renaming one strands requests already on disk.
constexpr EnumToken<SteerRequest::Action> kActions[] = {
    { SteerRequest::Action::Pin, "pin" },
    { SteerRequest::Action::Unpin, "unpin" },
    { SteerRequest::Action::Skip, "skip" },
    { SteerRequest::Action::Unskip, "unskip" },
    { SteerRequest::Action::Revert, "revert" },
    { SteerRequest::Action::Accept, "accept" },
    { SteerRequest::Action::Reject, "reject" },
    { SteerRequest::Action::Review, "review" },
    { SteerRequest::Action::MoveOn, "move_on" },
    { SteerRequest::Action::Verification, "verification" },
};

bool isKernelAction(SteerRequest::Action a)
{
    return a != SteerRequest::Action::Review && a != SteerRequest::Action::MoveOn
        && a != SteerRequest::Action::Verification;
}

// A field the request may leave out (the default stays) but must not give with another type.
template<typename T, typename Read>
bool optionalField(
    const json &o, const char *key, Read read, std::optional<T> *out, const QString &action, QString *error)
{
    jsonfield::Problem problem;
    *out = read(o, key, &problem);
    if (*out || problem.missing())
        return true;
    return fail(error, QStringLiteral("%1: %2").arg(action, problem.message()));
}

} // namespace

SteerRequest SteerRequest::kernelAction(Action action, const QString &kernel, int experiment)
{
    SteerRequest r;
    r.m_action = action;
    r.m_kernel = kernel;
    r.m_experiment = experiment;
    return r;
}

SteerRequest SteerRequest::review(bool on)
{
    SteerRequest r;
    r.m_action = Action::Review;
    r.m_on = on;
    return r;
}

SteerRequest SteerRequest::moveOn(const json &fields, const QString &by)
{
    SteerRequest r;
    r.m_action = Action::MoveOn;
    r.m_value = fields;
    r.m_by = by;
    return r;
}

SteerRequest SteerRequest::moveOn(const MoveOnRules &rules, const QString &by)
{
    return moveOn(json::parse(rules.toJson().toStdString()), by);
}

SteerRequest SteerRequest::verification(const json &verification)
{
    SteerRequest r;
    r.m_action = Action::Verification;
    r.m_value = verification;
    return r;
}

SteerRequest &SteerRequest::withReason(const QString &reason)
{
    m_reason = reason;
    return *this;
}

QString SteerRequest::appliedText(const Experiment &created, const MoveOnRules &rules) const
{
    switch (m_action) {
    case Action::Pin:
        return QStringLiteral(
            "%1 pinned: its current best is locked; the loop leaves it alone until unpinned")
            .arg(m_kernel);
    case Action::Unpin:
        return QStringLiteral("%1 unpinned: the loop may work on it again").arg(m_kernel);
    case Action::Skip:
        return QStringLiteral("%1 skipped: the loop moves on to the next kernel").arg(m_kernel);
    case Action::Unskip:
        return QStringLiteral("%1 unskipped: the loop may work on it again").arg(m_kernel);
    case Action::Revert:
        return QStringLiteral("%1: experiment %2 restored as experiment %3 (commit %4)")
            .arg(m_kernel)
            .arg(m_experiment)
            .arg(created.id)
            .arg(created.commit.left(12));
    case Action::Accept:
        return QStringLiteral("experiment %1 accepted").arg(m_experiment);
    case Action::Reject:
        return QStringLiteral("experiment %1 rejected").arg(m_experiment);
    case Action::MoveOn:
        return QStringLiteral("move-on rules set: %1; the loop uses them from its next experiment")
            .arg(rules.summary());
    case Action::Review:
        return m_on
            ? QStringLiteral("review mode on: a would-be keep waits as pending until accepted or rejected")
            : QStringLiteral("review mode off: the loop keeps improvements itself");
    case Action::Verification:
        return QStringLiteral("verification recorded");
    }
    return QStringLiteral("%1: done").arg(actionName());
}

json SteerRequest::toJson() const
{
    json j { { "action", actionName().toStdString() } };
    switch (m_action) {
    case Action::Review:
        j["value"] = m_on;
        break;
    case Action::MoveOn:
        j["value"] = m_value;
        if (!m_by.isEmpty())
            j["by"] = m_by.toStdString();
        break;
    case Action::Verification:
        j["value"] = m_value;
        break;
    default:
        j["kernel"] = m_kernel.toStdString();
        j["experiment"] = m_experiment;
        if (m_reason)
            j["reason"] = m_reason->toStdString();
        break;
    }
    return j;
}

bool SteerRequest::fromJson(const json &j, SteerRequest *out, QString *error)
{
    jsonfield::Problem problem;
    const std::optional<QString> name = jsonfield::strict::text(j, "action", &problem);
    if (!name)
        return fail(error,
            problem.missing() ? QStringLiteral("a steering request needs an \"action\"") : problem.message());
    const std::optional<Action> action = actionFromName(*name);
    if (!action)
        return fail(error, QStringLiteral("unknown action \"%1\"").arg(*name));

    SteerRequest r;
    r.m_action = *action;
    if (isKernelAction(*action)) {
        std::optional<QString> kernel;
        std::optional<qint64> experiment;
        if (!optionalField(j, "kernel", jsonfield::strict::text, &kernel, *name, error)
            || !optionalField(j, "experiment", jsonfield::strict::integer, &experiment, *name, error)
            || !optionalField(j, "reason", jsonfield::strict::text, &r.m_reason, *name, error))
            return false;
        r.m_kernel = kernel.value_or(QString());
        r.m_experiment = int(experiment.value_or(0));
    } else if (*action == Action::Review) {
        std::optional<bool> on;
        if (!optionalField(j, "value", jsonfield::strict::boolean, &on, *name, error))
            return false;
        r.m_on = on.value_or(false);
    } else {
        const json *value = jsonfield::strict::object(j, "value");
        if (!value)
            return fail(error,
                *action == Action::MoveOn
                    ? QStringLiteral("move_on: \"value\" must be an object of move-on rules")
                    : QStringLiteral("verification: \"value\" must be the verification object"));
        r.m_value = *value;
        if (*action == Action::MoveOn) {
            std::optional<QString> by;
            if (!optionalField(j, "by", jsonfield::strict::text, &by, *name, error))
                return false;
            r.m_by = by.value_or(QString());
        }
    }
    if (out)
        *out = r;
    return true;
}

QString SteerRequest::actionName(Action action)
{
    return tokenOf(kActions, action);
}

std::optional<SteerRequest::Action> SteerRequest::actionFromName(const QString &name)
{
    Action action = Action::Pin;
    if (!fromToken(kActions, name, &action))
        return std::nullopt;
    return action;
}

bool SteerRequest::operator==(const SteerRequest &o) const
{
    return m_action == o.m_action && m_kernel == o.m_kernel && m_experiment == o.m_experiment
        && m_reason == o.m_reason && m_on == o.m_on && m_value == o.m_value && m_by == o.m_by;
}

} // namespace ak
