#include "widgets/steeringactions.h"

#include <QAction>
#include <QMessageBox>
#include <QPushButton>

namespace ak {

SteeringActions::SteeringActions(QObject *parent)
    : QObject(parent)
    , m_start(new QAction(tr("Start"), this))
    , m_pause(new QAction(tr("Pause"), this))
    , m_resume(new QAction(tr("Resume"), this))
    , m_stop(new QAction(tr("Stop"), this))
    , m_pin(new QAction(tr("Pin"), this))
    , m_skip(new QAction(tr("Skip"), this))
    , m_revert(new QAction(tr("Restore This Version"), this))
    , m_accept(new QAction(tr("Accept"), this))
    , m_reject(new QAction(tr("Reject"), this))
    , m_reviewMode(new QAction(tr("Review Mode (keeps wait for approval)"), this))
{
    setObjectName(QStringLiteral("SteeringActions"));
    m_pin->setCheckable(true);
    // Single keys for the review pass (a line edit keeps its printable keys: typing a filter does not
    // trigger them). Restore has none: it rewrites a kernel's head.
    m_accept->setShortcut(Qt::Key_A);
    m_reject->setShortcut(Qt::Key_R);
    m_pin->setShortcut(Qt::Key_P);
    m_skip->setShortcut(Qt::Key_S);
    // The loop's keys, shown in the Loop menu. Pause and Resume share F7: never both enabled (Running
    // vs Paused), and Qt skips a disabled action's shortcut, so the key toggles.
    m_start->setShortcut(Qt::Key_F6);
    m_pause->setShortcut(Qt::Key_F7);
    m_resume->setShortcut(Qt::Key_F7);
    m_stop->setShortcut(Qt::Key_F8);
    m_reviewMode->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V));
    m_start->setObjectName(QStringLiteral("StartAction"));
    m_pause->setObjectName(QStringLiteral("PauseAction"));
    m_resume->setObjectName(QStringLiteral("ResumeAction"));
    m_stop->setObjectName(QStringLiteral("StopAction"));
    m_accept->setObjectName(QStringLiteral("AcceptAction"));
    m_reject->setObjectName(QStringLiteral("RejectAction"));
    m_pin->setObjectName(QStringLiteral("PinAction"));
    m_skip->setObjectName(QStringLiteral("SkipAction"));
    m_revert->setObjectName(QStringLiteral("RestoreAction"));
    m_reviewMode->setCheckable(true);
    m_reviewMode->setObjectName(QStringLiteral("ReviewModeAction"));
    connect(m_start, &QAction::triggered, this, [this] {
        if (!m_control)
            return;
        if (m_control->capabilities().testFlag(LoopControl::CanStartStop))
            m_control->start();
        else if (m_launch && m_launchWhyNot.isEmpty())
            m_launch();
    });
    connect(m_pause, &QAction::triggered, this, [this] {
        if (m_control)
            m_control->pause();
    });
    connect(m_resume, &QAction::triggered, this, [this] {
        if (m_control)
            m_control->resume();
    });
    connect(m_stop, &QAction::triggered, this, [this] {
        if (m_control)
            m_control->stop();
    });
    connect(m_pin, &QAction::triggered, this, [this](bool checked) {
        if (!m_control || !m_kernel)
            return;
        if (checked)
            m_control->pin(*m_kernel);
        else
            m_control->unpin(*m_kernel);
    });
    connect(m_skip, &QAction::triggered, this, [this] {
        if (m_control && m_kernel)
            m_control->skip(*m_kernel);
    });
    connect(m_revert, &QAction::triggered, this, &SteeringActions::confirmRestore);
    connect(m_accept, &QAction::triggered, this, [this] {
        if (m_control && m_experiment)
            m_control->accept(m_experiment->id);
    });
    connect(m_reject, &QAction::triggered, this, [this] {
        if (m_control && m_experiment)
            m_control->reject(m_experiment->id);
    });
    connect(m_reviewMode, &QAction::triggered, this, [this](bool checked) {
        if (m_control && m_runReviewMode)
            m_control->setReviewMode(checked);
        else
            update(); // nothing asked: the check goes back to what the run says
    });
    update();
}

QString SteeringActions::noLoopReason()
{
    return tr("No optimisation loop is attached: this window is only viewing the run");
}

QList<QAction *> SteeringActions::loopActions() const
{
    return { m_start, m_pause, m_resume, m_stop };
}

QList<QAction *> SteeringActions::selectionActions() const
{
    return { m_pin, m_skip, m_revert, m_accept, m_reject };
}

void SteeringActions::setLoopControl(LoopControl *control)
{
    if (m_control)
        disconnect(m_control, nullptr, this, nullptr);
    m_control = control;
    if (control) {
        connect(control, &LoopControl::stateChanged, this, &SteeringActions::update);
        connect(control, &LoopControl::capabilitiesChanged, this, &SteeringActions::update);
        connect(control, &QObject::destroyed, this, &SteeringActions::update, Qt::QueuedConnection);
        // A refused switch: the check goes back to the run's mode.
        connect(control, &LoopControl::actionFailed, this, [this](const QString &action) {
            if (action == QLatin1String("setReviewMode"))
                update();
        });
    }
    update();
}

void SteeringActions::setLauncher(std::function<void()> launch, const QString &whyNot)
{
    m_launch = std::move(launch);
    m_launchWhyNot = whyNot;
    update();
}

void SteeringActions::setKernel(const QString &key, KernelState state)
{
    m_kernel = key;
    m_kernelState = state;
    update();
}

void SteeringActions::clearKernel()
{
    m_kernel.reset();
    update();
}

void SteeringActions::setExperiment(const Experiment &experiment, bool isHead)
{
    m_experiment = experiment;
    m_experimentIsHead = isHead;
    update();
}

void SteeringActions::setReadOnly(const QString &why)
{
    m_readOnly = why;
    update();
}

void SteeringActions::confirmRestore()
{
    if (!m_control || !m_experiment)
        return;
    // Restore rewrites the kernel's head (a new experiment that stays in the run): asked first, and
    // without a blocking exec() so that nothing runs underneath a nested event loop.
    auto *box = new QMessageBox(QMessageBox::Question, tr("Restore This Version"),
        tr("Make experiment %1's kernel.py the current version of %2 again?")
            .arg(m_experiment->id)
            .arg(m_experiment->kernel),
        QMessageBox::Yes | QMessageBox::Cancel, m_dialogParent);
    box->setObjectName(QStringLiteral("RestoreConfirmation"));
    box->setInformativeText(tr("This rewrites the kernel's head: the restore is recorded as a new "
                               "experiment, and the loop goes on from that version."));
    box->setDefaultButton(QMessageBox::Cancel);
    box->button(QMessageBox::Yes)->setText(tr("Restore"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(m_dialogParent ? Qt::WindowModal : Qt::ApplicationModal);
    const QString kernel = m_experiment->kernel;
    const int id = m_experiment->id;
    connect(box, &QMessageBox::finished, this, [this, box, kernel, id] {
        if (box->standardButton(box->clickedButton()) == QMessageBox::Yes && m_control
            && m_readOnly.isEmpty())
            m_control->revert(kernel, id);
    });
    box->open();
}

void SteeringActions::clearExperiment()
{
    m_experiment.reset();
    update();
}

void SteeringActions::setRunReviewMode(std::optional<bool> on)
{
    m_runReviewMode = on;
    update();
}

void SteeringActions::enable(QAction *action, bool on, const QString &enabledTip, const QString &whyNot)
{
    action->setEnabled(on);
    action->setToolTip(on ? enabledTip : QStringLiteral("%1 — %2").arg(action->text(), whyNot));
}

void SteeringActions::update()
{
    const bool pinned = m_kernel && m_kernelState == KernelState::Pinned;
    m_pin->setChecked(pinned);
    const bool review = m_runReviewMode.value_or(false);
    m_reviewMode->setChecked(review);
    if (!m_control || !m_readOnly.isEmpty()) {
        for (QAction *a : loopActions() + selectionActions() + QList<QAction *> { m_reviewMode })
            enable(a, false, QString(), m_control ? m_readOnly : noLoopReason());
        return;
    }
    const LoopControl::Capabilities caps = m_control->capabilities();
    const LoopControl::State state = m_control->state();
    const QString unsupported = tr("not supported by %1").arg(m_control->description());

    auto loopAction = [&](QAction *a, LoopControl::Capability cap, bool stateOk, const QString &tip,
                          const QString &stateWhy) {
        if (!caps.testFlag(cap))
            enable(a, false, tip, unsupported);
        else
            enable(a, stateOk, tip, stateWhy);
    };
    if (!caps.testFlag(LoopControl::CanStartStop) && m_launch)
        enable(m_start, m_launchWhyNot.isEmpty(),
            tr("Start the optimisation loop on this run in this window"), m_launchWhyNot);
    else
        loopAction(m_start, LoopControl::CanStartStop, state == LoopControl::State::Stopped,
            tr("Start the optimisation loop"), tr("the loop is already running"));
    loopAction(m_pause, LoopControl::CanPause, state == LoopControl::State::Running,
        tr("Pause after the current experiment"), tr("the loop is not running"));
    loopAction(m_resume, LoopControl::CanPause, state == LoopControl::State::Paused,
        tr("Resume the paused loop"), tr("the loop is not paused"));
    loopAction(m_stop, LoopControl::CanStartStop,
        state == LoopControl::State::Running || state == LoopControl::State::Paused,
        tr("Stop the loop; recorded experiments stay"), tr("the loop is not running"));

    const QString noKernel = tr("select a kernel in the table");
    if (!caps.testFlag(LoopControl::CanSteerKernels)) {
        enable(m_pin, false, QString(), unsupported);
        enable(m_skip, false, QString(), unsupported);
    } else if (!m_kernel) {
        enable(m_pin, false, QString(), noKernel);
        enable(m_skip, false, QString(), noKernel);
    } else {
        const bool finished = m_kernelState == KernelState::Done || m_kernelState == KernelState::Skipped
            || m_kernelState == KernelState::Unpluggable;
        enable(m_pin, !finished || pinned,
            pinned ? tr("Unpin %1: the loop may work on it again").arg(*m_kernel)
                   : tr("Pin %1: lock its current best; the loop does not touch it until unpinned")
                         .arg(*m_kernel),
            tr("%1 is %2").arg(*m_kernel, kernelStateName(m_kernelState)));
        enable(m_skip, !finished, tr("Skip %1: the loop moves to the next kernel").arg(*m_kernel),
            tr("%1 is already %2").arg(*m_kernel, kernelStateName(m_kernelState)));
    }

    const QString noExperiment = tr("select an experiment in the commit list");
    auto experimentAction
        = [&](QAction *a, LoopControl::Capability cap, ExperimentStatus needed, const QString &tip) {
              if (!caps.testFlag(cap))
                  enable(a, false, tip, unsupported);
              else if (!m_experiment)
                  enable(a, false, tip, noExperiment);
              else
                  enable(a, m_experiment->status == needed, tip,
                      tr("experiment %1 is %2, not %3")
                          .arg(m_experiment->id)
                          .arg(statusText(m_experiment->status), statusText(needed)));
          };
    const int id = m_experiment ? m_experiment->id : 0;
    // What RunStore::revert does: the selected version's kernel.py becomes the kernel's head again, as a
    // new experiment; any kept, rejected or baseline version can be restored.
    const QString restoreTip
        = QStringLiteral("Restore experiment %1: its kernel.py becomes the kernel's current version "
                         "again, recorded as a new experiment")
              .arg(id);
    if (m_experiment && caps.testFlag(LoopControl::CanRevert) && m_experimentIsHead)
        enable(m_revert, false, restoreTip,
            tr("experiment %1 is already %2's current version").arg(id).arg(m_experiment->kernel));
    else if (m_experiment && caps.testFlag(LoopControl::CanRevert)
        && (m_experiment->status == ExperimentStatus::Rejected
            || m_experiment->status == ExperimentStatus::Baseline))
        enable(m_revert, true, restoreTip, QString());
    else
        experimentAction(m_revert, LoopControl::CanRevert, ExperimentStatus::Kept, restoreTip);
    experimentAction(m_accept, LoopControl::CanReview, ExperimentStatus::Pending,
        tr("Accept experiment %1: keep it").arg(id));
    experimentAction(m_reject, LoopControl::CanReview, ExperimentStatus::Pending,
        tr("Reject experiment %1: drop it").arg(id));

    const QString reviewTip = review
        ? QStringLiteral("Review mode is on: a would-be keep waits as pending until you accept or reject it. "
                         "Uncheck to let the loop keep improvements itself (from its next experiment)")
        : QStringLiteral("Switch review mode on: from the loop's next experiment, a would-be keep waits as "
                         "pending until you accept or reject it");
    if (!caps.testFlag(LoopControl::CanSetReviewMode))
        enable(m_reviewMode, false, reviewTip, unsupported);
    else
        enable(m_reviewMode, m_runReviewMode.has_value(), reviewTip, tr("open a run first"));
}

} // namespace ak
