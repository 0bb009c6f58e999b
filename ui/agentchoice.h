#pragma once

#include "runsnapshot.h"
#include "widgets/logview.h"

#include <QObject>
#include <QPointer>
#include <QString>

class QAction;
class QWidget;

namespace ak {

class AgentSettingsDialog;
class LoopHost;

// Loop ▸ Agent…: the agent, devices and Python that Loop ▸ Start uses (AgentSettingsDialog, saved in
// the user's settings store), prefilled from the saved choice or the shown run's run.json. The action's
// tooltip says what Start will run. What was chosen leaves through message and statusMessage, so that
// the window alone decides where messages go.
class AgentChoice : public QObject
{
    Q_OBJECT
public:
    // window: the dialog's parent. loops: the window's loop, which a new choice may reach; not owned.
    AgentChoice(QWidget *window, LoopHost *loops);

    QAction *action() const { return m_action; } // enabled without a run: the choice is the user's

    // Opens the dialog prefilled from `run`'s run.json (nullptr: no run shown); raises it when open.
    void edit(const RunSnapshotPtr &run);

Q_SIGNALS:
    // The action: the window hands over the run it shows, then edit() follows.
    void editRequested();
    void message(ak::LogView::Level level, const QString &text); // for the log
    void statusMessage(const QString &text, int timeoutMs);

private:
    void updateTip();
    void chosen(const AgentSettingsDialog &dialog);

    QWidget *m_window;
    LoopHost *m_loops;
    QAction *m_action;
    QPointer<AgentSettingsDialog> m_dialog;
};

} // namespace ak
