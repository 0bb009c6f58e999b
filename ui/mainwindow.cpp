#include "mainwindow.h"
#include "uilog.h"

#include "agentchoice.h"
#include "widgets/actionerrorbanner.h"

#include "devicedetector.h"
#include "examplerunstarter.h"
#include "gitrepo.h"
#include "loopcontrol.h"
#include "loopsummarystatus.h"
#include "mainmenus.h"
#include "modelview.h"
#include "moveonrulesstatus.h"
#include "recentrunsmenu.h"
#include "remoterunopener.h"
#include "roofsaction.h"
#include "runfollower.h"
#include "runstatuslabels.h"
#include "widgets/devicestatus.h"
#include "widgets/emptystate.h"
#include "widgets/logview.h"
#include "widgets/presentationview.h"
#include "widgets/replaybar.h"
#include "widgets/reportexport.h"
#include "widgets/runsummarybar.h"
#include "widgets/sandboxstatus.h"
#include "widgets/steeringactions.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QVBoxLayout>

namespace ak {

namespace {

QByteArray readBlobFromRun(const QString &runDir, const QString &commit, const QString &path, QString *error)
{
    const auto repo = GitRepo::open(runDir, error);
    if (!repo)
        return {};
    return repo->readBlob(commit, path, error);
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_follower(new RunFollower(this))
    , m_steering(new SteeringActions(this))
    , m_loops(new LoopHost(this))
    , m_examples(new ExampleRunStarter(this))
    , m_remote(new RemoteRunOpener(this, m_loops))
    , m_central(new QStackedWidget(this))
    , m_noRun(new EmptyState(m_central))
    , m_workspace(new RunWorkspace(m_steering, m_central))
    , m_log(new LogView(this))
    , m_modelView(new ModelView(this))
    , m_report(new ReportExport(this))
    , m_deviceStatus(new DeviceStatus(this))
    , m_rules(new MoveOnRulesStatus(this))
    , m_agent(new AgentChoice(this, m_loops))
    , m_runLabels(new RunStatusLabels(this))
    , m_readOnlyBanner(new QLabel(this))
    , m_errorBanner(new ActionErrorBanner(this))
    , m_replayBar(new ReplayBar(this))
    , m_presentation(std::make_unique<PresentationView>())
{
    setWindowTitle(tr("AutoKernel Studio"));
    setObjectName(QStringLiteral("MainWindow"));
    m_noRun->setObjectName(QStringLiteral("NoRunState"));
    m_workspace->setBlobReader(&readBlobFromRun);
    m_steering->setDialogParent(this); // Restore's question is window-modal on the window
    m_presentation->setBlobReader(&readBlobFromRun);
    connect(m_workspace, &RunWorkspace::message, this,
        [this](const QString &text) { m_log->appendMessage(LogView::Level::Warning, text); });

    createCentre();
    connectReplay();
    QDockWidget *logDock = createDocks();
    connectModelView();
    createMenus();
    connectLoops();
    createStatusBar();
    connectFollower();

    // Fits the screen it opens on (#41: 1400×900 overhung a 1280×800 laptop); a saved geometry wins.
    QSize size(1400, 900);
    if (const QScreen *screen = QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableGeometry().size());
    resize(size);
    // The log holds a few lines until someone reads it: not a quarter of the window.
    resizeDocks({ logDock }, { fontMetrics().height() * 7 }, Qt::Vertical);
    restoreSettings();
}

// The stack of the empty state and the workspace, under the read-only and error banners and over
// the replay bar.
void MainWindow::createCentre()
{
    m_central->addWidget(m_noRun);
    m_central->addWidget(m_workspace);
    auto *centre = new QWidget(this);
    auto *centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->setSpacing(0);
    m_readOnlyBanner->setObjectName(QStringLiteral("ReadOnlyBanner"));
    m_readOnlyBanner->setWordWrap(true);
    m_readOnlyBanner->setTextInteractionFlags(Qt::TextSelectableByMouse); // the commands can be copied
    m_readOnlyBanner->setAutoFillBackground(true);
    m_readOnlyBanner->setBackgroundRole(QPalette::ToolTipBase);
    m_readOnlyBanner->setForegroundRole(QPalette::ToolTipText);
    m_readOnlyBanner->setContentsMargins(8, 6, 8, 6);
    m_readOnlyBanner->hide();
    centreLayout->addWidget(m_readOnlyBanner);
    centreLayout->addWidget(m_errorBanner);
    centreLayout->addWidget(m_central, 1);
    centreLayout->addWidget(m_replayBar);
    setCentralWidget(centre);
}

// The Log dock at the bottom and the Model dock at the right; returns the Log dock, which the
// constructor sizes once the window is.
QDockWidget *MainWindow::createDocks()
{
    auto *logDock = new QDockWidget(tr("Log"), this);
    logDock->setObjectName(QStringLiteral("LogDock"));
    logDock->setWidget(m_log);
    addDockWidget(Qt::BottomDockWidgetArea, logDock);

    auto *modelDock = new QDockWidget(tr("Model"), this);
    modelDock->setObjectName(QStringLiteral("ModelDock"));
    modelDock->setWidget(m_modelView);
    addDockWidget(Qt::RightDockWidgetArea, modelDock);
    return logDock;
}

// What the Model dock says goes to the log and the status bar; a verification of the shown run reloads it.
void MainWindow::connectModelView()
{
    connect(m_modelView, &ModelView::info, this, [this](const QString &text) {
        m_log->appendMessage(LogView::Level::Info, text);
        statusBar()->showMessage(text, 10000);
    });
    connect(m_modelView, &ModelView::failed, this, [this](const QString &text) {
        m_log->appendMessage(LogView::Level::Error, text);
        statusBar()->showMessage(text, 15000);
    });
    connect(m_modelView, &ModelView::verified, this, [this](const QString &dir) {
        if (dir == m_runDir)
            reload();
    });
}

// Loop ▸ Measure Device Roofs, the menu bar and the steering toolbar, and the empty state's Open.
void MainWindow::createMenus()
{
    // Loop ▸ Measure Device Roofs (#43): what % of roof is against, measured again on demand.
    auto *roofs = new RoofsAction(this);
    connect(roofs, &RoofsAction::measured, this, [this](const QString &text) {
        m_log->appendMessage(LogView::Level::Info, text);
        statusBar()->showMessage(text, 15000);
    });
    connect(roofs, &RoofsAction::failed, this, [this](const QString &text) {
        m_log->appendMessage(LogView::Level::Error, text);
        statusBar()->showMessage(text, 15000);
    });
    m_menus = new MainMenus(
        this, { m_steering, m_workspace, m_modelView, m_examples, m_report, m_rules, m_agent, roofs });
    connectMenus();
    m_noRun->setMessage(tr("No run open"), ExampleRunStarter::noRunHint());
    m_noRun->setAction(m_menus->openAction());
    connectExamples();
    connectRemote();
}

// The loop summary, the loops' control and messages, and the report's result.
void MainWindow::connectLoops()
{
    m_loopStatus = new LoopSummaryStatus(m_loops, m_remote, m_steering, this);
    connect(m_loopStatus, &LoopSummaryStatus::loopChanged, this, [this](const QString &where) {
        m_workspace->summaryBar()->setLoop(where);
        m_presentation->setLoop(where);
    });
    connect(m_loops, &LoopHost::controlChanged, this, &MainWindow::attachControl);
    connect(m_loops, &LoopHost::loopEnded, m_modelView, &ModelView::loopEnded);
    connect(m_report, &ReportExport::finished, this, [this](bool ok, const QString &text) {
        m_log->appendMessage(ok ? LogView::Level::Info : LogView::Level::Error, text);
    });
    connect(m_loops, &LoopHost::message, this,
        [this](const QString &text) { m_log->appendMessage(LogView::Level::Warning, text); });
}

// The status bar's permanent labels in their order, and this machine's device, detected off the GUI thread.
void MainWindow::createStatusBar()
{
    statusBar()->addPermanentWidget(m_runLabels->reviewMode());
    statusBar()->addPermanentWidget(m_rules->label());
    connect(m_rules, &MoveOnRulesStatus::editRequested, this, &MainWindow::editMoveOnRules);
    connect(m_rules, &MoveOnRulesStatus::message, m_log, &LogView::appendMessage);
    connect(m_agent, &AgentChoice::editRequested, this, &MainWindow::editAgent);
    connect(m_agent, &AgentChoice::message, m_log, &LogView::appendMessage);
    connect(m_agent, &AgentChoice::statusMessage, statusBar(), &QStatusBar::showMessage);
    m_sandbox = new SandboxStatus(this);
    statusBar()->addPermanentWidget(m_sandbox);
    statusBar()->addPermanentWidget(m_runLabels->runDevice());
    statusBar()->addPermanentWidget(m_deviceStatus);
    // Detection may load vendor libraries and query drivers: never on the GUI thread.
    m_deviceStatus->startDetection([] {
        QStringList log;
        DeviceInfo d = DeviceDetector::detect(0, &log);
        if (!d.available && !log.isEmpty()) // say what was tried, in the tooltip
            d.note
                = (d.note.isEmpty() ? QString() : d.note + QLatin1Char('\n')) + log.join(QLatin1Char('\n'));
        return d;
    });
    connect(m_deviceStatus, &DeviceStatus::detected, this, [this](const DeviceInfo &d) {
        m_log->appendMessage(LogView::Level::Info, tr("this machine: %1").arg(d.summary()));
    });
}

// The run follower's reloads, loads, failures and loop lines.
void MainWindow::connectFollower()
{
    connect(m_follower, &RunFollower::reloadDue, this, &MainWindow::reload);
    connect(m_follower, &RunFollower::loaded, this, &MainWindow::showLoaded);
    connect(m_follower, &RunFollower::failed, this, [this](const QString &dir, const QString &error) {
        reportOpenFailure(dir, error, ExampleRunStarter::noRunHint());
    });
    connect(m_follower, &RunFollower::loopLine, this,
        [this](const QString &text) { m_log->appendMessage(LogView::Level::Info, text); });
}

MainWindow::~MainWindow() = default;

void MainWindow::connectMenus()
{
    connect(m_menus, &MainMenus::openRequested, this, &MainWindow::openDialog);
    connect(m_menus, &MainMenus::newRunRequested, this, &MainWindow::newRun);
    connect(m_menus, &MainMenus::openRemoteRequested, m_remote, &RemoteRunOpener::openDialog);
    connect(m_menus->recent(), &RecentRunsMenu::openRequested, this, &MainWindow::openRun);
    connect(m_menus, &MainMenus::reloadRequested, this, [this] {
        checkAccess(m_runDir); // permissions fixed since: steering comes back
        reload();
    });
    connect(m_menus, &MainMenus::replayRequested, this, [this] { m_replayBar->start(m_runDir); });
    connect(m_menus, &MainMenus::presentRequested, this, &MainWindow::present);
    connect(
        m_menus, &MainMenus::exampleRequested, this, qOverload<const QString &>(&MainWindow::openExample));
}

bool MainWindow::isShowingRun() const
{
    return m_central->currentWidget() == m_workspace;
}

void MainWindow::setBlobReader(RunWorkspace::BlobReader reader)
{
    m_presentation->setBlobReader(reader);
    m_workspace->setBlobReader(std::move(reader));
}

void MainWindow::present()
{
    if (!m_workspace->snapshot())
        return;
    m_presentation->setSnapshot(m_workspace->snapshot());
    m_presentation->showFullScreen();
    m_presentation->raise();
    m_presentation->activateWindow();
}

void MainWindow::showInViews(const RunSnapshotPtr &snapshot)
{
    m_workspace->setSnapshot(snapshot);
    m_modelView->setSnapshot(snapshot);
    if (m_presentation->isVisible())
        m_presentation->setSnapshot(snapshot);
}

void MainWindow::setLoopControl(LoopControl *control)
{
    m_loops->setOverride(control);
}

void MainWindow::setLoopFactory(LoopHost::Factory factory)
{
    m_loops->setFactory(std::move(factory));
}

void MainWindow::attachControl(LoopControl *control)
{
    if (m_attached)
        disconnect(m_attached, nullptr, this, nullptr);
    m_attached = control;
    m_rules->setControl(m_access.readOnly() ? nullptr : control); // read-only: the rules dialog too
    // A replay shows the past: nothing is steered from it until Back to Live.
    m_steering->setLoopControl(m_replayBar->isActive() ? nullptr : control);
    m_loopStatus->setControl(control);
    if (control) {
        connect(control, &LoopControl::message, this,
            [this](const QString &text) { m_log->appendMessage(LogView::Level::Info, text); });
        connect(
            control, &LoopControl::actionFailed, this, [this](const QString &action, const QString &error) {
                m_log->appendMessage(LogView::Level::Error, QStringLiteral("%1: %2").arg(action, error));
                statusBar()->showMessage(tr("%1 failed: %2").arg(action, error), 10000);
                m_errorBanner->showError(action, error); // where the user looks, until dismissed
            });
        connect(control, &LoopControl::actionFinished, this,
            [this](const QString &action, const QString &detail) {
                m_log->appendMessage(LogView::Level::Info, QStringLiteral("%1: %2").arg(action, detail));
                statusBar()->showMessage(QStringLiteral("%1: %2").arg(action, detail), 5000);
                m_errorBanner->clear();
                scheduleReload(); // the watcher would notice too; this makes the table follow at once
            });
    }
}

void MainWindow::openRun(const QString &runDir)
{
    if (RemoteRun::isRemote(runDir)) {
        QString error;
        const RemoteRun run = RemoteRunOpener::parse(runDir, &error);
        if (!run.isValid()) {
            m_log->appendMessage(LogView::Level::Error, error);
            statusBar()->showMessage(tr("Could not open %1").arg(error), 10000);
            explainWhileNoRun(tr("Could not open %1").arg(runDir), error);
            Q_EMIT runLoadFailed(runDir, error);
            return;
        }
        openRemoteRun(run);
        return;
    }
    m_examples->runOpened();
    m_replayBar->stop();
    m_remote->drop();
    startLoad(QDir(runDir).absolutePath());
}

void MainWindow::openRemoteRun(const RemoteRun &run)
{
    m_examples->runOpened();
    m_replayBar->stop();
    m_remote->open(run);
}

void MainWindow::connectRemote()
{
    connect(m_remote, &RemoteRunOpener::openRequested, this, &MainWindow::openRemoteRun);
    connect(m_remote, &RemoteRunOpener::ready, this, &MainWindow::startLoad);
    connect(m_remote, &RemoteRunOpener::changed, this, &MainWindow::scheduleReload);
    connect(m_remote, &RemoteRunOpener::message, m_log, &LogView::appendMessage);
    connect(m_remote, &RemoteRunOpener::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_remote, &RemoteRunOpener::explanation, this, &MainWindow::explainWhileNoRun);
    connect(m_remote, &RemoteRunOpener::openFailed, this, &MainWindow::reportOpenFailure);
}

void MainWindow::explainWhileNoRun(const QString &title, const QString &text)
{
    // Over a run on screen the message would hide it: the log and the status bar carry it then.
    if (!isShowingRun())
        m_noRun->setMessage(title, text);
}

void MainWindow::reportOpenFailure(const QString &what, const QString &error, const QString &next)
{
    m_log->appendMessage(LogView::Level::Error, QStringLiteral("%1: %2").arg(what, error));
    statusBar()->showMessage(tr("Could not open %1: %2").arg(what, error), 10000);
    explainWhileNoRun(tr("Could not open %1").arg(QDir::toNativeSeparators(what)),
        QStringLiteral("%1\n\n%2").arg(error, next));
    Q_EMIT runLoadFailed(what, error);
}

void MainWindow::openExample(const QString &name)
{
    m_examples->open(name);
}

void MainWindow::openExample(const ExampleRun::Options &options)
{
    m_examples->open(options);
}

void MainWindow::newRun()
{
    m_examples->newRun();
}

void MainWindow::connectExamples()
{
    connect(m_examples, &ExampleRunStarter::message, m_log, &LogView::appendMessage);
    connect(m_examples, &ExampleRunStarter::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_examples, &ExampleRunStarter::explanation, this, &MainWindow::explainWhileNoRun);
    // While a run is being made, the empty state offers to cancel it instead of opening another.
    connect(m_examples, &ExampleRunStarter::creatingChanged, this,
        [this](bool creating) { m_noRun->setAction(creating ? m_examples->cancelAction() : nullptr); });
    connect(m_examples, &ExampleRunStarter::ready, this, &MainWindow::openRun);
    connect(m_examples, &ExampleRunStarter::failed, this, &MainWindow::exampleFailed);
    // A run that could not be made (New Run's model with a syntax error, say) says so in a dialog
    // over the window, not only in the log, and in the banner once the dialog is closed (#41).
    connect(m_examples, &ExampleRunStarter::failed, this, [this](const QString &name, const QString &error) {
        if (error == QLatin1String("cancelled"))
            return; // the user's own Cancel Profiling: nothing to tell them
        m_errorBanner->showError(tr("Creating %1").arg(name), error);
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Could not create the run"),
            tr("%1 could not be created.").arg(name), QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("RunCreationFailedDialog"));
        box->setDetailedText(error);
        box->setInformativeText(error.section(QLatin1Char('\n'), -3).trimmed()); // the traceback's end
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
}

void MainWindow::setLoader(Loader loader)
{
    m_follower->setLoader(std::move(loader));
}

void MainWindow::reload()
{
    if (m_runDir.isEmpty() || m_replayBar->isActive()) // Back to Live reloads
        return;
    m_follower->reload(m_runDir, m_shown);
}

void MainWindow::scheduleReload()
{
    m_follower->scheduleReload();
}

void MainWindow::startLoad(const QString &dir)
{
    m_log->appendMessage(LogView::Level::Info, tr("opening %1").arg(dir));
    statusBar()->showMessage(tr("Loading %1…").arg(dir));
    m_follower->open(dir);
}

void MainWindow::showLoaded(const QString &dir, const RunSnapshotPtr &snapshot, bool isReload)
{
    for (const QString &w : snapshot->warnings)
        m_log->appendMessage(LogView::Level::Warning, w);
    if (!isReload) {
        m_menus->recent()->add(m_remote->addressFor(dir));
        statusBar()->showMessage(tr("Opened %1: %2 kernels, %3 experiments")
                                     .arg(dir)
                                     .arg(snapshot->kernels.size())
                                     .arg(snapshot->experiments.size()),
            5000);
    }
    QElapsedTimer shown;
    shown.start();
    showSnapshot(snapshot);
    qCDebug(lcUi) << (isReload ? "reloaded" : "opened") << dir << "shown in" << shown.elapsed()
                  << "ms on the GUI thread";
    if (isReload)
        m_loops->refresh(); // a loop may have started or stopped in another process
    Q_EMIT runLoaded(dir);
}

void MainWindow::setShown(const RunSnapshotPtr &snapshot)
{
    // One place: a reload reads on from it and the loop summary describes it; apart, they drifted.
    m_shown = snapshot;
    m_loopStatus->setRun(snapshot);
}

void MainWindow::showSnapshot(const RunSnapshotPtr &snapshot)
{
    if (!snapshot)
        return;
    if (m_replayBar->isActive() && snapshot->runDir == m_runDir) {
        setShown(snapshot); // a load that was under way: shown after the replay, not over it
        return;
    }
    const bool sameRun = snapshot->runDir == m_runDir && isShowingRun();
    if (snapshot->runDir != m_runDir)
        m_loops->setRunDir(snapshot->runDir); // steer the run being shown: a DirectoryControl for it
    m_runDir = snapshot->runDir;
    // Qt's property for what a window shows (a proxy icon in the title where the platform draws one).
    setWindowFilePath(m_runDir);
    if (!sameRun)
        checkAccess(m_runDir);
    setShown(snapshot);
    showInViews(snapshot);
    m_report->setRunDir(snapshot->runDir);
    m_loopStatus->update();
    m_central->setCurrentWidget(m_workspace);
    m_menus->runShown();
    QString name = m_remote->displayNameFor(snapshot->runDir);
    if (name.isEmpty())
        name = QFileInfo(snapshot->runDir).fileName();
    setWindowTitle((snapshot->recording.isEmpty() ? tr("%1 — AutoKernel Studio")
                                                  : tr("%1 — Recording — AutoKernel Studio"))
                       .arg(name.isEmpty() ? snapshot->runDir : name));
    if (!sameRun) {
        fitModelDock(*snapshot);
        m_errorBanner->clear(); // another run's error
    }
    m_rules->showRun(*snapshot, sameRun);
    m_steering->setRunReviewMode(snapshot->reviewMode);
    m_runLabels->showRun(*snapshot);
    m_sandbox->showRun(*snapshot);
}

void MainWindow::fitModelDock(const RunSnapshot &run)
{
    // The Model dock of a run never verified holds a Verify button and a sentence: narrow, so the
    // kernel table and the charts get the width (#41: it took 30 % at 1280 px). A verification gets
    // the room its table needs. Only when the dock is docked; a width in between is the user's.
    auto *dock = findChild<QDockWidget *>(QStringLiteral("ModelDock"));
    if (!dock || dock->isFloating() || !dock->isVisible())
        return;
    const int narrow = m_modelView->minimumSizeHint().width() + 8;
    const int wide = std::max(narrow, width() * 3 / 10);
    if (!run.verification && dock->width() > narrow)
        resizeDocks({ dock }, { narrow }, Qt::Horizontal);
    else if (run.verification && dock->width() < wide)
        resizeDocks({ dock }, { wide }, Qt::Horizontal);
}

void MainWindow::checkAccess(const QString &dir)
{
    if (dir.isEmpty())
        return;
    // A remote run's mirror is ours to write; its steering goes to the remote writer, which says no there.
    m_access = m_remote->displayNameFor(dir).isEmpty() ? RunAccess::check(dir) : RunAccess();
    m_steering->setReadOnly(m_access.readOnly() ? tr("Read only: %1").arg(m_access.readOnlyWhy) : QString());
    m_rules->setControl(m_access.readOnly() ? nullptr : m_attached.data());
    if (m_access.readOnly()) {
        m_readOnlyBanner->setText(
            tr("<b>Read only</b> — %1 %2")
                .arg(m_access.readOnlyWhy.toHtmlEscaped(), m_access.whatToDo.toHtmlEscaped()));
        m_log->appendMessage(LogView::Level::Warning,
            tr("%1 is read-only: %2 %3").arg(dir, m_access.readOnlyWhy, m_access.whatToDo));
    }
    m_readOnlyBanner->setVisible(m_access.readOnly());
}

void MainWindow::connectReplay()
{
    connect(m_replayBar, &ReplayBar::started, this, [this] {
        m_steering->setLoopControl(nullptr);
        m_log->appendMessage(LogView::Level::Info,
            tr("replaying %1: %2 experiments; steering is off until Back to Live")
                .arg(m_runDir)
                .arg(m_replayBar->frameCount()));
    });
    connect(m_replayBar, &ReplayBar::frameShown, this, [this](const RunSnapshotPtr &snapshot) {
        showInViews(snapshot);
        const QString name = QFileInfo(snapshot->runDir).fileName();
        setWindowTitle(tr("%1 — Replay — AutoKernel Studio").arg(name));
    });
    connect(m_replayBar, &ReplayBar::ended, this, [this] {
        m_steering->setLoopControl(m_attached);
        m_log->appendMessage(LogView::Level::Info, tr("replay ended: back to the run as it is now"));
        reload();
    });
    connect(m_replayBar, &ReplayBar::failed, this, [this](const QString &error) {
        m_log->appendMessage(LogView::Level::Error, tr("cannot replay: %1").arg(error));
        statusBar()->showMessage(tr("Cannot replay: %1").arg(error), 15000);
    });
}

void MainWindow::editMoveOnRules()
{
    const RunSnapshotPtr run = m_workspace->snapshot();
    if (!run || !isShowingRun())
        return;
    m_rules->edit(*run);
}

void MainWindow::editAgent()
{
    m_agent->edit(isShowingRun() ? m_workspace->snapshot() : RunSnapshotPtr());
}

void MainWindow::openDialog()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Run Directory"), m_runDir);
    if (!dir.isEmpty())
        openRun(dir);
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("mainWindow"));
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("state")).toByteArray());
    m_workspace->restoreState(settings.value(QStringLiteral("workspace")).toByteArray());
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("mainWindow"));
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("state"), saveState());
    settings.setValue(QStringLiteral("workspace"), m_workspace->saveState());
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveSettings();
    QMainWindow::closeEvent(event);
}

} // namespace ak
