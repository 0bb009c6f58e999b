#include "mainmenus.h"

#include "agentchoice.h"
#include "buildinfo.h"
#include "examplerunstarter.h"
#include "modelview.h"
#include "moveonrulesstatus.h"
#include "recentrunsmenu.h"
#include "roofsaction.h"
#include "services/examplerun.h"
#include "widgets/reportexport.h"
#include "widgets/runworkspace.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenuBar>
#include <QMessageBox>
#include <QToolBar>

namespace ak {

MainMenus::MainMenus(QMainWindow *window, const Parts &parts)
    : QObject(window)
    , m_window(window)
{
    createFileMenu(parts);

    auto *toolbar = window->addToolBar(tr("Steering"));
    toolbar->setObjectName(QStringLiteral("SteeringToolBar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    toolbar->addActions(parts.steering->loopActions());
    toolbar->addSeparator();
    toolbar->addActions(parts.steering->selectionActions());

    QMenu *view = window->menuBar()->addMenu(tr("&View"));
    for (QDockWidget *dock : window->findChildren<QDockWidget *>())
        view->addAction(dock->toggleViewAction());
    view->addAction(toolbar->toggleViewAction());
    view->addSeparator();
    view->addAction(parts.workspace->compareBestAction());
    m_replay = view->addAction(tr("&Replay Run"), this, &MainMenus::replayRequested);
    m_replay->setObjectName(QStringLiteral("ReplayRunAction"));
    m_replay->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_replay->setToolTip(
        tr("Play the run back as it happened, with a timeline to scrub (Esc: back to live)"));
    m_replay->setEnabled(false);
    m_present = view->addAction(tr("&Presentation"), this, &MainMenus::presentRequested);
    m_present->setObjectName(QStringLiteral("PresentationAction"));
    m_present->setShortcut(Qt::Key_F5);
    m_present->setToolTip(tr("The run full screen in large type: the model's speedup, the charts and "
                             "the latest improvement (Esc: back). Plays along with a replay."));
    m_present->setEnabled(false);

    QMenu *loop = window->menuBar()->addMenu(tr("&Loop"));
    loop->addActions(parts.steering->loopActions());
    loop->addSeparator();
    loop->addActions(parts.steering->selectionActions());
    loop->addAction(parts.workspace->nextPendingAction());
    loop->addAction(parts.workspace->pendingOnlyAction());
    loop->addSeparator();
    loop->addAction(parts.steering->reviewMode());
    loop->addAction(parts.rules->action());
    loop->addAction(parts.agent->action());
    if (parts.roofs)
        loop->addAction(parts.roofs->action());

    QMenu *model = window->menuBar()->addMenu(tr("&Model"));
    model->setObjectName(QStringLiteral("ModelMenu"));
    model->setToolTipsVisible(true);
    model->addAction(parts.model->verifyAction());
    model->addAction(parts.model->verifyWithOptionsAction());
    model->addAction(parts.model->cancelAction());
    model->addAction(parts.model->verifyAtEndAction());
    model->addSeparator();
    model->addAction(parts.model->exportAction());

    createHelpMenu();
}

void MainMenus::createFileMenu(const Parts &parts)
{
    QMenu *file = m_window->menuBar()->addMenu(tr("&File"));
    m_open = file->addAction(tr("&Open Run…"), this, &MainMenus::openRequested);
    m_open->setShortcut(QKeySequence::Open);
    QAction *newRun = file->addAction(tr("&New Run…"), this, &MainMenus::newRunRequested);
    newRun->setObjectName(QStringLiteral("NewRunAction"));
    newRun->setShortcut(QKeySequence::New);
    newRun->setToolTip(tr("Profile a model file (or a bundled example) into a new run and open it"));
    file->addAction(parts.examples->cancelAction());
    QAction *openRemote = file->addAction(tr("Open Re&mote Run…"), this, &MainMenus::openRemoteRequested);
    openRemote->setObjectName(QStringLiteral("OpenRemoteRunAction"));
    openRemote->setToolTip(tr("Follow a run on another machine over ssh (ssh://host/path/to/run)"));
    m_recent = new RecentRunsMenu(file->addMenu(tr("Open &Recent")));
    m_reload = file->addAction(tr("Re&load"), this, &MainMenus::reloadRequested);
    m_reload->setObjectName(QStringLiteral("ReloadAction"));
    // Not QKeySequence::Refresh: that is F5 on X11 too, which Presentation has; two actions on one key
    // make Qt refuse both ("Ambiguous shortcut overload").
    m_reload->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_reload->setEnabled(false);
    file->addAction(parts.report->action());
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), m_window, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
}

void MainMenus::createHelpMenu()
{
    QMenu *help = m_window->menuBar()->addMenu(tr("&Help"));
    QMenu *examples = help->addMenu(tr("Open &Example Run"));
    examples->setObjectName(QStringLiteral("ExampleMenu"));
    examples->setToolTipsVisible(true);
    for (const QString &name : ExampleRun::names()) {
        QAction *a = examples->addAction(name, this, [this, name] { Q_EMIT exampleRequested(name); });
        a->setToolTip(QStringLiteral("Open the bundled %1 model's run; the first time it is profiled on this "
                                     "machine (in the background)")
                          .arg(name));
    }
    for (const QString &name : ExampleRun::recordings()) {
        QAction *a = examples->addAction(
            tr("%1 (recording)").arg(name), this, [this, name] { Q_EMIT exampleRequested(name); });
        a->setToolTip(
            tr("A real run recorded on a GPU server and shipped with the app: open it, replay it (View ▸ "
               "Replay Run), present it; the loop does not run on a recording"));
    }
    help->addSeparator();
    help->addAction(tr("&About AutoKernel Studio"), this, &MainMenus::showAbout);
}

void MainMenus::runShown()
{
    m_reload->setEnabled(true);
    m_replay->setEnabled(true);
    m_present->setEnabled(true);
}

void MainMenus::showAbout()
{
    QMessageBox::about(m_window, tr("About AutoKernel Studio"),
        QStringLiteral("<h3>AutoKernel Studio %1</h3>"
                       "<p>Profiles a PyTorch model, ranks its GPU kernels by Amdahl's law and "
                       "optimises them in an autonomous loop; every attempt is a git commit in the "
                       "run directory.</p><p>git %3 · Qt %2</p>")
            .arg(BuildInfo::version(), QString::fromLatin1(qVersion()), BuildInfo::revision()));
}

} // namespace ak
