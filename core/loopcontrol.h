#pragma once

#include "moveonrules.h"

#include <QFlags>
#include <QObject>
#include <QString>

namespace ak {

// The optimisation loop as the GUI steers it (GammaRay's TimerTopInterface pattern): an abstract
// QObject here in core, the in-process implementation in agent, a fake in tests, a remote one later,
// all without touching ui. Calls are requests: they return at once and never block the caller; the
// outcome arrives through the signals (stateChanged, actionFinished / actionFailed).
//
// Kernels are named by their folder name inside the run directory, the same string as
// Experiment::kernel (e.g. "01-matmul"); experiments by their run-wide Experiment::id.
class LoopControl : public QObject
{
    Q_OBJECT
public:
    enum class State { Stopped, Running, Paused, Stopping };
    Q_ENUM(State)

    // What this implementation can do at all; the GUI disables what is missing and says why.
    enum Capability {
        NoCapability = 0,
        CanStartStop = 1 << 0, // start, stop
        CanPause = 1 << 1, // pause, resume
        CanSteerKernels = 1 << 2, // pin, unpin, skip
        CanRevert = 1 << 3, // revert a kept experiment
        CanReview = 1 << 4, // accept / reject a pending experiment (review mode)
        CanEditRules = 1 << 5, // setMoveOnRules
        CanSetReviewMode = 1 << 6, // setReviewMode
    };
    Q_DECLARE_FLAGS(Capabilities, Capability)
    Q_FLAG(Capabilities)

    explicit LoopControl(QObject *parent = nullptr)
        : QObject(parent)
    { }
    ~LoopControl() override = default;

    virtual Capabilities capabilities() const = 0;
    virtual State state() const = 0;
    // One line for the GUI: "local loop on NVIDIA H200", "replay of run-0412".
    virtual QString description() const = 0;

    virtual void start() = 0;
    virtual void pause() = 0;
    virtual void resume() = 0;
    virtual void stop() = 0;

    // Pin locks the kernel's current best: the loop does not touch it again (no new experiment,
    // revert or accept) until it is unpinned. The run store enforces this (docs/run-format.md).
    virtual void pin(const QString &kernel) = 0;
    virtual void unpin(const QString &kernel) = 0; // the loop may work on the kernel again
    virtual void skip(const QString &kernel) = 0; // move on; the loop does not return to it
    virtual void revert(const QString &kernel, int experimentId) = 0; // undo a kept experiment
    virtual void accept(int experimentId) = 0; // keep a pending experiment
    virtual void reject(int experimentId) = 0; // drop a pending experiment

    // Replaces the run's move-on rules (run.json "move_on", all four fields); the loop uses them from
    // its next experiment boundary, without a restart. Outcome: actionFinished / actionFailed with
    // action "setMoveOnRules". Implementations that can do it also report CanEditRules; this default
    // refuses.
    virtual void setMoveOnRules(const ak::MoveOnRules &rules)
    {
        Q_UNUSED(rules)
        Q_EMIT actionFailed(QStringLiteral("setMoveOnRules"),
            QStringLiteral("%1 cannot change the move-on rules").arg(description()));
    }

    // Switches the run's review mode (RunSnapshot::reviewMode; docs/run-format.md "Review mode"): on,
    // a would-be keep is logged pending and waits for accept / reject. The loop sees it from its next
    // experiment. Outcome: actionFinished / actionFailed with action "setReviewMode". Implementations
    // that can do it also report CanSetReviewMode; this default refuses.
    virtual void setReviewMode(bool on)
    {
        Q_UNUSED(on)
        Q_EMIT actionFailed(QStringLiteral("setReviewMode"),
            QStringLiteral("%1 cannot switch review mode: not supported").arg(description()));
    }

Q_SIGNALS:
    void stateChanged(ak::LoopControl::State state);
    void capabilitiesChanged();
    // Free text for the log, e.g. "01-matmul: experiment 14 kept (1.31x)".
    void message(const QString &text);
    // A request was carried out / could not be; action is the method name ("pin", "revert", ...).
    void actionFinished(const QString &action, const QString &detail);
    void actionFailed(const QString &action, const QString &error);
};

} // namespace ak

Q_DECLARE_OPERATORS_FOR_FLAGS(ak::LoopControl::Capabilities)
