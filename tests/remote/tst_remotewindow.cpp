// The window on a run that lives on another machine (`autokernel ssh://host/path`, docs/remote.md):
// a loop writes the run "there" (behind a real sshd on a loopback port), the window mirrors it over
// ssh + rsync and follows it live, and a pin made in the window reaches the remote writer.
#include "kernelrecord.h"
#include "mainwindow.h"
#include "remoterun.h"
#include "runloader.h"
#include "runlock.h"
#include "services/remotecontrol.h"
#include "services/remotesession.h"
#include "sshserver.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/runworkspace.h"

#include <QDir>
#include <QElapsedTimer>
#include <QLabel>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace ak;

namespace {

int lastFinished(const RunSnapshotPtr &run)
{
    int id = 0;
    if (run)
        for (const Experiment &e : run->experiments)
            if (e.status != ExperimentStatus::Running && e.status != ExperimentStatus::Baseline)
                id = qMax(id, e.id);
    return id;
}

} // namespace

class RemoteWindowTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    test::SshServer m_ssh;

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        return env;
    }

    // The address of `dir` behind the test's sshd, with its key and port, and the CLI built here.
    RemoteRun remote(const QString &dir) const
    {
        QStringList ssh = m_ssh.launcher().split(QLatin1Char(' '));
        const QString host = ssh.takeLast();
        RemoteRun run = RemoteRun::parse(QStringLiteral("ssh://%1%2").arg(host, dir), nullptr);
        run.setSsh(ssh);
        run.setRemoteCli({ test::cliPath() });
        return run;
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (test::SshServer::sshdPath().isEmpty())
            AK_SKIP_WITHOUT_SERVICE(QStringLiteral(
                "openssh-server is not installed (packaging/setup-deps.sh installs it; CI has it)"));
        if (QStandardPaths::findExecutable(QStringLiteral("rsync")).isEmpty())
            AK_SKIP_WITHOUT_SERVICE(
                QStringLiteral("rsync is not installed (packaging/setup-deps.sh installs it; CI has it)"));
        QVERIFY(m_dir.isValid());
        QString error;
        QVERIFY2(m_ssh.start(&error), qPrintable(error));
    }

    void missingRunSaysSo()
    {
        MainWindow w;
        QSignalSpy failed(&w, &MainWindow::runLoadFailed);
        w.openRemoteRun(remote(m_dir.filePath(QStringLiteral("nothing-here"))));
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() >= 1, 30000);
        const QString error = failed.first().at(1).toString();
        QVERIFY2(error.contains(QStringLiteral("no run directory")), qPrintable(error));
    }

    void windowFollowsTheRemoteWriterAndAPinReachesIt()
    {
        const QString far = m_dir.filePath(QStringLiteral("far"));
        test::CliResult r
            = test::runCli({ QStringLiteral("profile"), QStringLiteral("--model"), QStringLiteral("cnn"),
                               QStringLiteral("--out"), far, QStringLiteral("--device"),
                               QStringLiteral("cpu"), QStringLiteral("--top"), QStringLiteral("2"),
                               QStringLiteral("--python"), test::testPython() },
                180000, environment());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        // No goal ends a kernel early (the in-model rule included: a keep the model does not show would
        // move the loop on and end it): the loop keeps writing while the window watches.
        r = test::runCli(test::everyMoveOnRuleOff(far), 30000, environment());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));

        QProcess loop;
        loop.setProcessEnvironment(environment());
        loop.start(test::cliPath(),
            { QStringLiteral("run"), far, QStringLiteral("--device"), QStringLiteral("cpu"),
                QStringLiteral("--quick"), QStringLiteral("--agent"), QStringLiteral("tune"),
                QStringLiteral("--budget"), QStringLiteral("900s"), QStringLiteral("--python"),
                test::testPython() });
        QVERIFY(loop.waitForStarted());
        auto stopLoop = qScopeGuard([&loop] {
            if (loop.state() != QProcess::NotRunning) {
                ::kill(pid_t(loop.processId()), SIGINT);
                if (!loop.waitForFinished(60000))
                    loop.kill();
            }
        });
        QTRY_VERIFY_WITH_TIMEOUT(RunLock::holderPid(far) != 0, 30000);

        MainWindow w;
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        const RemoteRun run = remote(far);
        w.openRemoteRun(run);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() >= 1, 60000);
        QCOMPARE(w.windowFilePath(), QDir(run.cacheDir()).absolutePath());
        QVERIFY2(w.windowTitle().contains(run.display()), qPrintable(w.windowTitle()));
        // The window's own control of the remote run, found in its object tree as a widget would be.
        auto *control = w.findChild<RemoteControl *>();
        QVERIFY(control);
        // Where the loop runs: on that host, the writer's pid from the mirrored lock.
        auto *where = w.findChild<QLabel *>(QStringLiteral("SummaryLoop"));
        QVERIFY(where);
        QTRY_VERIFY_WITH_TIMEOUT(where->text().contains(QString::number(loop.processId())), 10000);

        // The mirror holds the remote writer's lock while it works (its kernel is not pinned yet, no
        // rule or budget ends it before the test's guard does).
        const qint64 writer = loop.processId();
        QVERIFY(loop.state() == QProcess::Running);
        QCOMPARE(RunLock::holderPid(w.windowFilePath()), writer);

        // Live: the next experiment the writer records shows in the window within a few seconds.
        auto *workspace = w.findChild<RunWorkspace *>();
        QVERIFY(workspace);
        const int before = lastFinished(RunLoader::load(far));
        int recorded = 0;
        QTRY_VERIFY_WITH_TIMEOUT((recorded = lastFinished(RunLoader::load(far))) > before, 90000);
        QElapsedTimer shown;
        shown.start();
        QTRY_VERIFY_WITH_TIMEOUT(lastFinished(workspace->snapshot()) >= recorded, 10000);
        qInfo("experiment %d shown %lld ms after the writer's log had it (test polls every 50 ms)", recorded,
            qint64(shown.elapsed()));

        // A pin from the window's control: queued for the remote writer, applied by it, seen here.
        // The first kernel the loop may work on (a folder the plug-check refused takes no pin).
        QString kernel;
        for (const KernelRecord &k : workspace->snapshot()->kernels)
            if (kernel.isEmpty() && k.state != KernelState::Unpluggable)
                kernel = k.key();
        QVERIFY(!kernel.isEmpty());
        QSignalSpy finished(control, &LoopControl::actionFinished);
        QSignalSpy failedAction(control, &LoopControl::actionFailed);
        control->pin(kernel);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failedAction.count() >= 1, 30000);
        QVERIFY2(failedAction.isEmpty(), qPrintable(failedAction.value(0).value(1).toString()));
        QTRY_VERIFY_WITH_TIMEOUT(RunLoader::load(far)->kernel(kernel)->state == KernelState::Pinned, 90000);
        QTRY_VERIFY_WITH_TIMEOUT(workspace->snapshot()->kernel(kernel)->state == KernelState::Pinned, 10000);

        // Nothing local wrote the mirror for the pin: no lock of ours in it. Pinning the run's one
        // workable kernel ends the remote loop (nothing left to work on), so its lock may be gone by now.
        const qint64 holder = RunLock::holderPid(w.windowFilePath());
        QVERIFY2(holder != QCoreApplication::applicationPid(), "the window took the mirrored run's lock");
        QVERIFY2(holder == 0 || holder == writer, qPrintable(QString::number(holder)));
    }
};

AK_TEST_CLASS(RemoteWindowTest)
#include "tst_remotewindow.moc"
