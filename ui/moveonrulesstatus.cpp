#include "moveonrulesstatus.h"

#include "dialogs/moveonrulesdialog.h"
#include "experimentlog.h"
#include "loopcontrol.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QLabel>
#include <QStringList>

#include <algorithm>

namespace ak {

MoveOnRulesStatus::MoveOnRulesStatus(QWidget *window)
    : QObject(window)
    , m_window(window)
    , m_label(new QLabel(window))
    , m_action(new QAction(tr("Move-on &Rules…"), this))
{
    m_label->setObjectName(QStringLiteral("MoveOnRulesLabel"));
    m_label->setContentsMargins(0, 0, 16, 0);
    m_label->hide();
    connect(m_label, &QLabel::linkActivated, this, &MoveOnRulesStatus::editRequested);
    m_action->setObjectName(QStringLiteral("MoveOnRulesAction"));
    m_action->setEnabled(false);
    m_action->setToolTip(tr("Move-on Rules — open a run first"));
    connect(m_action, &QAction::triggered, this, &MoveOnRulesStatus::editRequested);
}

void MoveOnRulesStatus::showRun(const RunSnapshot &snapshot, bool sameRun)
{
    const MoveOnRules &rules = snapshot.config.moveOn;
    const QString &why = snapshot.config.moveOnWarning;
    const bool ok = why.isEmpty();
    auto part = [](bool on, const QString &text, const QString &off) { return on ? text : off; };
    const QString compact = QStringList{
        part(rules.maxConsecutiveReverts > 0, tr("%1 revert%2").arg(rules.maxConsecutiveReverts).arg(rules.maxConsecutiveReverts == 1 ? QString() : QStringLiteral("s")), tr("no revert limit")),
        part(rules.roofPct > 0, tr("%1% roof").arg(rules.roofPct, 0, 'g', 4), tr("no roof goal")),
        part(rules.speedupOverBaseline > 0, QStringLiteral("%1x").arg(rules.speedupOverBaseline, 0, 'g', 4), tr("no speedup goal")),
        part(rules.hoursPerKernel > 0, tr("%1 h").arg(rules.hoursPerKernel, 0, 'g', 4), tr("no time limit")),
        part(rules.maxInModelMisses > 0, tr("%1 in-model").arg(rules.maxInModelMisses), tr("no in-model rule")),
    }.join(QStringLiteral(" · "));
    m_label->setText(tr("<a href=\"rules\">Move on: %1%2</a>")
                         .arg(compact.toHtmlEscaped(), ok ? QString() : QStringLiteral(" (!)")));
    QString tip = tr("Move-on rules (run.json \"move_on\"): %1.").arg(rules.summary());
    if (!ok)
        tip += tr("\n%1; the loop uses the defaults.").arg(why);
    if (!snapshot.moveOnChanges.isEmpty()) {
        const MoveOnChange &c = snapshot.moveOnChanges.constLast();
        tip += tr("\nLast changed %1 by %2.")
                   .arg(c.time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), c.by);
    }
    tip += tr("\nClick to see or change them (Loop ▸ Move-on Rules…).");
    m_label->setToolTip(tip);
    m_label->show();
    m_action->setEnabled(true);
    m_action->setToolTip(tr("See or change when the loop leaves a kernel: %1").arg(rules.summary()));

    // Changes made since the last look (by this window, the CLI, another window) go to the log.
    const int changes = int(snapshot.moveOnChanges.size());
    if (sameRun) {
        for (int i = std::min(m_changesSeen, changes); i < changes; ++i) {
            const MoveOnChange &c = snapshot.moveOnChanges.at(i);
            Q_EMIT message(LogView::Level::Info,
                tr("move-on rules changed %1 by %2: %3")
                    .arg(ExperimentLog::timeText(c.time), c.by, c.rules.summary()));
        }
    }
    m_changesSeen = changes;
}

void MoveOnRulesStatus::edit(const RunSnapshot &run)
{
    if (m_dialog) {
        m_dialog->raise();
        m_dialog->activateWindow();
        return;
    }
    auto *dialog = new MoveOnRulesDialog(m_window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setRun(run);
    const bool editable = m_control && m_control->capabilities().testFlag(LoopControl::CanEditRules);
    dialog->setEditable(editable,
        m_control ? tr("not supported by %1").arg(m_control->description())
                  : SteeringActions::noLoopReason());
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const MoveOnRules rules = dialog->rules();
        if (!m_control) {
            Q_EMIT message(
                LogView::Level::Error, tr("setMoveOnRules: %1").arg(SteeringActions::noLoopReason()));
            return;
        }
        Q_EMIT message(LogView::Level::Info,
            tr("setting the move-on rules through %1: %2").arg(m_control->description(), rules.summary()));
        m_control->setMoveOnRules(rules);
    });
    m_dialog = dialog;
    dialog->open();
}

} // namespace ak
