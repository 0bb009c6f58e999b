#pragma once

#include "runsnapshot.h"
#include "widgets/logview.h"

#include <QObject>
#include <QPointer>
#include <QString>

class QAction;
class QLabel;
class QWidget;

namespace ak {

class LoopControl;
class MoveOnRulesDialog;

// The shown run's move-on rules (run.json "move_on"): the status bar's rules label, Loop ▸ Move-on
// Rules… and the dialog both open, which hands the rules to the attached LoopControl on OK. Changes
// found on a reload (made by this window, the CLI or another window) leave through message, for the log.
class MoveOnRulesStatus : public QObject
{
    Q_OBJECT
public:
    explicit MoveOnRulesStatus(QWidget *window); // the dialog's parent, and the label's

    QLabel *label() const { return m_label; } // hidden until a run is shown
    QAction *action() const { return m_action; } // disabled until a run is shown

    // `sameRun`: a reload of the run shown before, whose new rule changes go to the log.
    void showRun(const RunSnapshot &snapshot, bool sameRun);
    // What OK hands the rules to (nullptr: no loop; the dialog says so). Not owned.
    void setControl(LoopControl *control) { m_control = control; }
    // Opens the dialog on `run` (raises it when open already).
    void edit(const RunSnapshot &run);

Q_SIGNALS:
    // The label's link or the action: the window checks a run is shown, then calls edit().
    void editRequested();
    void message(ak::LogView::Level level, const QString &text);

private:
    QWidget *m_window;
    QLabel *m_label;
    QAction *m_action;
    QPointer<LoopControl> m_control;
    QPointer<MoveOnRulesDialog> m_dialog;
    int m_changesSeen = 0; // moveOnChanges of the shown run already written to the log
};

} // namespace ak
