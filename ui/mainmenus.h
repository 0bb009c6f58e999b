#pragma once

#include <QObject>
#include <QString>

class QAction;
class QMainWindow;

namespace ak {

class AgentChoice;
class ExampleRunStarter;
class ModelView;
class MoveOnRulesStatus;
class RecentRunsMenu;
class RoofsAction;
class ReportExport;
class RunWorkspace;
class SteeringActions;

// The window's menu bar and steering toolbar. The window's parts keep their own actions (steering,
// the workspace's filters, the model's verify, the report); the menus only arrange them. The actions
// that are the window's own (open, reload, replay, present, the examples) leave through signals, so
// that the window alone decides what opening or replaying means, as with ExampleRunStarter.
class MainMenus : public QObject
{
    Q_OBJECT
public:
    // What the window's parts contribute to the menus; not owned, and all must outlive the menus.
    struct Parts
    {
        SteeringActions *steering = nullptr;
        RunWorkspace *workspace = nullptr;
        ModelView *model = nullptr;
        ExampleRunStarter *examples = nullptr;
        ReportExport *report = nullptr;
        MoveOnRulesStatus *rules = nullptr;
        AgentChoice *agent = nullptr;
        RoofsAction *roofs = nullptr; // Loop ▸ Measure Device Roofs
    };

    // Fills `window`'s menu bar and adds the toolbar; the View menu lists the docks `window` has now.
    MainMenus(QMainWindow *window, const Parts &parts);

    QAction *openAction() const { return m_open; } // File ▸ Open Run…, offered by the empty state too
    RecentRunsMenu *recent() const { return m_recent; } // File ▸ Open Recent
    // A run shows: Reload, Replay Run and Presentation have something to act on from now on.
    void runShown();

Q_SIGNALS:
    void openRequested(); // File ▸ Open Run…
    void newRunRequested();
    void openRemoteRequested();
    void reloadRequested();
    void replayRequested(); // View ▸ Replay Run: the run shown
    void presentRequested();
    void exampleRequested(const QString &name); // a bundled example or recording, by name

private:
    void createFileMenu(const Parts &parts);
    void createHelpMenu();
    void showAbout();

    QMainWindow *m_window;
    QAction *m_open = nullptr;
    RecentRunsMenu *m_recent = nullptr;
    QAction *m_reload = nullptr;
    QAction *m_replay = nullptr;
    QAction *m_present = nullptr;
};

} // namespace ak
