#pragma once

#include "experiment.h"
#include "kernelrecord.h"
#include "loopcontrol.h"

#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>

class QAction;
class QWidget;

namespace ak {

// The steering buttons (start, pause, resume, stop, pin, skip, revert, accept, reject, review mode) as
// QActions for the toolbar and menus. Each is enabled from the selection and the attached LoopControl's
// state and capabilities; a disabled action's tooltip says why.
class SteeringActions : public QObject
{
    Q_OBJECT
public:
    explicit SteeringActions(QObject *parent = nullptr);

    // nullptr: no loop attached (viewing a run); every action is disabled.
    void setLoopControl(LoopControl *control);
    LoopControl *loopControl() const { return m_control; }
    // Start for a control that cannot start a loop itself (a DirectoryControl): `launch` creates and
    // attaches one. whyNot, when not empty, disables Start and becomes its tooltip (no loop factory,
    // another process writes the run). A null `launch`: Start is "not supported" as before.
    void setLauncher(std::function<void()> launch, const QString &whyNot = QString());

    void setKernel(const QString &key, KernelState state);
    void clearKernel();
    // isHead: the experiment is its kernel's current version (Restore would change nothing).
    void setExperiment(const Experiment &experiment, bool isHead = false);
    void clearExperiment();
    // The shown run's review mode (RunSnapshot::reviewMode, after each load); nullopt: no run shown.
    // The Review Mode action's check follows it.
    void setRunReviewMode(std::optional<bool> on);
    // Not empty: the shown run must not be written (a shipped example recording, a run owned by another
    // user or on a read-only disk). Every action that writes is disabled with `why` as its tooltip.
    void setReadOnly(const QString &why);
    QString readOnlyReason() const { return m_readOnly; }
    // Restore asks first (it rewrites the kernel's head); the question is window-modal on `parent`.
    void setDialogParent(QWidget *parent) { m_dialogParent = parent; }

    QAction *start() const { return m_start; }
    QAction *pause() const { return m_pause; }
    QAction *resume() const { return m_resume; }
    QAction *stop() const { return m_stop; }
    QAction *pin() const { return m_pin; } // checkable: checked = pinned; unchecking unpins
    QAction *skip() const { return m_skip; }
    QAction *revert() const { return m_revert; }
    QAction *accept() const { return m_accept; }
    QAction *reject() const { return m_reject; }
    // Loop ▸ Review Mode: checkable, checked = the shown run is in review mode; toggling asks the
    // control (setReviewMode). The check shows the run as last loaded, so a request queued for a
    // running loop shows once that loop has applied it and the run is reloaded.
    QAction *reviewMode() const { return m_reviewMode; }
    QList<QAction *> loopActions() const;
    QList<QAction *> selectionActions() const;

    static QString noLoopReason();

private:
    void update();
    void confirmRestore();
    void enable(QAction *action, bool on, const QString &enabledTip, const QString &whyNot);

    QPointer<LoopControl> m_control;
    std::function<void()> m_launch;
    QString m_launchWhyNot;
    std::optional<QString> m_kernel;
    KernelState m_kernelState = KernelState::Waiting;
    std::optional<Experiment> m_experiment;
    std::optional<bool> m_runReviewMode;
    bool m_experimentIsHead = false;
    QString m_readOnly;
    QPointer<QWidget> m_dialogParent;
    QAction *m_start;
    QAction *m_pause;
    QAction *m_resume;
    QAction *m_stop;
    QAction *m_pin;
    QAction *m_skip;
    QAction *m_revert;
    QAction *m_accept;
    QAction *m_reject;
    QAction *m_reviewMode;
};

} // namespace ak
