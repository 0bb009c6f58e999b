#pragma once

#include "experiment.h"
#include "moveonrules.h"

#include <nlohmann/json.hpp>

#include <QString>

#include <optional>

namespace ak {

// One steering request for a run: pin, skip, revert, accept, reject, review mode, move-on rules, or a
// verification made while another process writes the run. The CLI, the window and the in-process loop
// build it; RunSteering::steer applies it at once or queues it for the run's writer, and the writer
// reads queued ones back with fromJson. toJson() is the queued file's format (docs/run-format.md,
// "Steering from another process"), so this is the only place that knows the action names and fields.
class SteerRequest
{
public:
    enum class Action { Pin, Unpin, Skip, Unskip, Revert, Accept, Reject, Review, MoveOn, Verification };

    SteerRequest() = default; // a pin of no kernel, for fromJson to fill in

    // pin, unpin, skip, unskip, revert, accept, reject. `kernel` is empty for accept and reject,
    // `experiment` 0 but for revert, accept and reject; both are written either way, as the queued
    // files always had them.
    static SteerRequest kernelAction(Action action, const QString &kernel, int experiment = 0);
    static SteerRequest review(bool on);
    // `fields`: an object with some of the move-on rules' fields; they replace the writer's current
    // ones and the others stay, so two people changing different rules do not undo each other.
    // `by` names the requester for the log (RunStore::author()); the writer's own name when empty.
    static SteerRequest moveOn(const nlohmann::json &fields, const QString &by);
    static SteerRequest moveOn(const MoveOnRules &rules, const QString &by);
    // `verification`: the object verification.json gets (autokernel-cli verify while a loop runs).
    static SteerRequest verification(const nlohmann::json &verification);

    // A reason is part of the JSON once set, even an empty one: the CLI and the window have always
    // written "reason" and the in-process loop never did, and the queued files stay as they were.
    SteerRequest &withReason(const QString &reason);

    Action action() const { return m_action; }
    QString actionName() const { return actionName(m_action); }
    QString kernel() const { return m_kernel; }
    int experiment() const { return m_experiment; }
    QString reason() const { return m_reason.value_or(QString()); }
    bool hasReason() const { return m_reason.has_value(); }
    bool on() const { return m_on; } // review
    const nlohmann::json &value() const { return m_value; } // move_on fields, the verification
    QString by() const { return m_by; } // move_on

    // What an applied request did, in the words the window shows (and the writer records for a
    // queued one): "01-matmul pinned: …", "experiment 7 accepted". `created`: a revert's new
    // experiment; `rules`: the move-on rules after a move_on.
    QString appliedText(const Experiment &created, const MoveOnRules &rules) const;

    nlohmann::json toJson() const;
    // Missing fields take their defaults (no kernel, experiment 0, review off) as the writer always
    // read them; a field of the wrong type, an unknown action, or a move_on / verification without
    // its object refuses the request with `error` naming the field.
    static bool fromJson(const nlohmann::json &json, SteerRequest *out, QString *error);

    // "pin", "unpin", "skip", "unskip", "revert", "accept", "reject", "review", "move_on", "verification"
    static QString actionName(Action action);
    static std::optional<Action> actionFromName(const QString &name);

    bool operator==(const SteerRequest &other) const;
    bool operator!=(const SteerRequest &other) const { return !(*this == other); }

private:
    Action m_action = Action::Pin;
    QString m_kernel;
    int m_experiment = 0;
    std::optional<QString> m_reason;
    bool m_on = false;
    nlohmann::json m_value;
    QString m_by;
};

} // namespace ak
