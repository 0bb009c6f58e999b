#pragma once

#include "runaccess.h"
#include "runsnapshot.h"
#include "services/examplerun.h"
#include "services/loophost.h"
#include "widgets/runworkspace.h"

#include <QMainWindow>
#include <QPointer>

#include <functional>
#include <memory>

class QDockWidget;
class QLabel;
class QStackedWidget;

namespace ak {

class ActionErrorBanner;
class AgentChoice;
class DeviceStatus;
class EmptyState;
class ExampleRunStarter;
class LogView;
class LoopControl;
class LoopSummaryStatus;
class MainMenus;
class ModelView;
class PresentationView;
class ReplayBar;
class ReportExport;
class MoveOnRulesStatus;
class RemoteRun;
class RemoteRunOpener;
class RunFollower;
class RunStatusLabels;
class SandboxStatus;
class SteeringActions;

// The application window: kernel table, chart, commit list + diff (RunWorkspace), log dock, model
// dock (ModelView), steering toolbar, and the device of the run and of this machine in the status bar. Runs
// load in the background; the latest request wins and stale results are dropped.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    using Loader = std::function<RunSnapshotPtr(const QString &dir, QString *error)>;

    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Starts loading runDir in the background; runLoaded or runLoadFailed follows. An ssh:// address
    // opens a remote run (openRemoteRun) with the commands File ▸ Open Remote Run… remembered.
    void openRun(const QString &runDir);
    // Mirrors a run on another machine into the local cache, opens the copy once complete and follows
    // it live; the window's steering then runs the remote autokernel-cli (RemoteSession). Errors
    // (no ssh, no rsync, no such run) show in the window, and the mirror keeps trying.
    void openRemoteRun(const RemoteRun &run);
    // Loads the open run again (File ▸ Reload, or the watcher saw a change); updates in place.
    void reload();
    // Coalesces bursts of change notifications into one reload.
    void scheduleReload();
    // Shows a snapshot directly (what a finished load does).
    void showSnapshot(const RunSnapshotPtr &snapshot);

    // Replaces RunLoader (tests); reloads then go through it too instead of RunLoader::reload.
    void setLoader(Loader loader);
    void setBlobReader(RunWorkspace::BlobReader reader);
    // Steers the open run with `control` instead of the default (a DirectoryControl for the open run,
    // or the loop Loop ▸ Start made). nullptr goes back to the default. Not owned.
    void setLoopControl(LoopControl *control);
    // Makes the in-process loop for Loop ▸ Start (app/gui/main.cpp sets ak::LocalLoop). Without one,
    // Start stays disabled and its tooltip says why.
    void setLoopFactory(LoopHost::Factory factory);

    // Opens the run of a bundled example (ExampleRun), creating it in the background first when it
    // does not exist yet; progress and errors show in the window. runLoaded or exampleFailed follows.
    void openExample(const QString &name);
    void openExample(const ExampleRun::Options &options);
    // File ▸ New Run…: NewRunDialog, then the chosen model is profiled into the chosen folder (with
    // progress in the window and File ▸ Cancel Profiling) and the run opens.
    void newRun();

    bool isShowingRun() const;
    void editMoveOnRules();
    // View ▸ Presentation (F5): the shown run full screen for a room, following reloads and replays.
    void present();
    void editAgent();

Q_SIGNALS:
    void runLoaded(const QString &dir);
    void runLoadFailed(const QString &dir, const QString &error);
    void exampleFailed(const QString &name, const QString &error);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    // Opens `dir` (a local folder, or a remote run's mirror): RunFollower loads it, showLoaded follows.
    void startLoad(const QString &dir);
    // What a finished load does: the log, the status bar and Open Recent hear of it, then showSnapshot.
    void showLoaded(const QString &dir, const RunSnapshotPtr &snapshot, bool isReload);
    void openDialog();
    // The empty state's title and text, while no run is shown.
    void explainWhileNoRun(const QString &title, const QString &text);
    // A run (a folder or an ssh:// address) could not be opened: the log, the status bar, the empty
    // state (with `next`: what to try) and runLoadFailed say so.
    void reportOpenFailure(const QString &what, const QString &error, const QString &next);
    void attachControl(LoopControl *control);
    // The example and new runs being made report to the log, the status bar and the empty state.
    void connectExamples();
    // The remote run being mirrored reports to the same places; once copied it opens like any run.
    void connectRemote();
    // File, View and Help ask; the window opens, reloads, replays and presents.
    void connectMenus();
    void restoreSettings();
    void saveSettings() const;
    void connectReplay();
    // The constructor's steps, in the order it runs them (widget creation and connection order kept:
    // it sets tab order and signal order).
    void createCentre();
    QDockWidget *createDocks();
    void connectModelView();
    void createMenus();
    void connectLoops();
    void createStatusBar();
    void connectFollower();
    void setShown(const RunSnapshotPtr &snapshot); // m_shown and the loop summary's run
    // The workspace, the model dock and (when open) the presentation show `snapshot`.
    void showInViews(const RunSnapshotPtr &snapshot);
    // Finds out whether the shown run may be written (RunAccess) and, when not, turns steering off and
    // shows the banner saying why. On open and File ▸ Reload only: the check creates a file, which
    // the run's watcher would answer with a reload.
    // Narrows the Model dock for a run with nothing verified, widens it for one with a verification.
    void fitModelDock(const RunSnapshot &run);
    void checkAccess(const QString &dir);

    RunFollower *m_follower; // loads the run, and again when it changes
    RunSnapshotPtr m_shown; // what a reload reads on from (only what was appended to the log)
    QString m_runDir; // the run shown (or being opened)

    SteeringActions *m_steering;
    LoopHost *m_loops;
    QPointer<LoopControl> m_attached; // what m_steering and the log are connected to
    ExampleRunStarter *m_examples; // File ▸ New Run…, Help ▸ Open Example Run
    RemoteRunOpener *m_remote; // File ▸ Open Remote Run…, and the remote run shown (or being mirrored)
    QStackedWidget *m_central;
    EmptyState *m_noRun;
    RunWorkspace *m_workspace;
    LogView *m_log;
    ModelView *m_modelView;
    ReportExport *m_report;
    DeviceStatus *m_deviceStatus;
    // The shown run's move-on rules: the status bar's label, Loop ▸ Move-on Rules… and its dialog.
    MoveOnRulesStatus *m_rules;
    AgentChoice *m_agent; // Loop ▸ Agent…: what Loop ▸ Start runs
    RunStatusLabels *m_runLabels;
    QLabel *m_readOnlyBanner; // above the workspace while the shown run is read-only
    ActionErrorBanner *m_errorBanner; // a failed window action, until dismissed or the next success
    RunAccess m_access; // of the shown run // the status bar's run device and review mode labels
    SandboxStatus *m_sandbox;
    ReplayBar *m_replayBar;
    // A window of its own, not a child: it goes full screen, and the window's children stay unique.
    std::unique_ptr<PresentationView> m_presentation;
    MainMenus *m_menus = nullptr; // the menu bar and the steering toolbar
    // Where the shown run's loop runs, and what Loop ▸ Start says; made once the menus hold Start.
    LoopSummaryStatus *m_loopStatus = nullptr;
};

} // namespace ak
