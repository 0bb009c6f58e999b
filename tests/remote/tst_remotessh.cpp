// `autokernel-cli run --launcher 'ssh …'` against a real sshd on a loopback port (docs/remote.md):
// the far side starts with an empty cache of its own and gets the worker's files and every kernel
// through the ssh channel; its experiments match a local run's; a killed ssh client is a recorded
// crash and the loop goes on; a far side without torch pauses the loop. Where bubblewrap works, the
// far side runs as on another machine: every session is in a namespace where the test's folders
// (run directories, the coordinator's cache) are empty, so nothing is shared by accident.
#include "experiment.h"
#include "gitrepo.h"
#include "runloader.h"
#include "runstore.h"
#include "sshserver.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>
#include <memory>

using namespace ak;

namespace {

// The pids of `parent`'s children whose command line starts with `program`.
QList<qint64> childrenRunning(qint64 parent, const QString &program)
{
    QList<qint64> out;
    for (const QString &entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool ok = false;
        const qint64 pid = entry.toLongLong(&ok);
        QFile stat(QStringLiteral("/proc/%1/stat").arg(entry));
        if (!ok || !stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray s = stat.readAll();
        const QList<QByteArray> fields = s.mid(s.lastIndexOf(')') + 2).split(' ');
        if (fields.size() < 2 || fields.at(1).toLongLong() != parent)
            continue;
        QFile cmd(QStringLiteral("/proc/%1/cmdline").arg(entry));
        if (cmd.open(QIODevice::ReadOnly) && cmd.readAll().split('\0').value(0).endsWith(program.toUtf8()))
            out << pid;
    }
    return out;
}

} // namespace

class RemoteSshTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir; // the coordinator's: hidden from the far side when m_isolation is empty
    test::SshServer m_ssh;
    QString m_profiled;
    QString m_isolation = QStringLiteral("not started"); // why the far side sees the test's folders

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        return env;
    }

    test::CliResult cli(const QStringList &args, int timeoutMs = 180000)
    {
        return test::runCli(args, timeoutMs, environment());
    }

    // A copy of the profiled run, so that each test starts from the same kernels and baselines.
    QString copyOfRun(const QString &name)
    {
        const QString dir = m_dir.filePath(name);
        const test::CliResult r
            = test::runProgram(QStringLiteral("cp"), { QStringLiteral("-a"), m_profiled, dir });
        return r.exitCode == 0 ? dir : QString();
    }

    QStringList runArgs(const QString &dir, const QStringList &more) const
    {
        return QStringList { QStringLiteral("run"), dir, QStringLiteral("--device"), QStringLiteral("cpu"),
            QStringLiteral("--quick") }
        + more;
    }

    static QString describe(const test::CliResult &r)
    {
        return QStringLiteral("exit %1\n%2\n%3").arg(r.exitCode).arg(r.out, r.err);
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (test::SshServer::sshdPath().isEmpty())
            AK_SKIP_WITHOUT_SERVICE(QStringLiteral(
                "openssh-server is not installed (packaging/setup-deps.sh installs it; CI has it)"));
        QVERIFY(m_dir.isValid());
        if (test::SshServer::bwrapPath().isEmpty())
            m_isolation = QStringLiteral(
                "bubblewrap is not installed (packaging/setup-deps.sh installs it; CI has it)");
        else
            m_isolation = test::SshServer::isolationProblem();
        if (m_isolation.isEmpty())
            m_ssh.hideFromFarSide({ m_dir.path() });
        QString error;
        QVERIFY2(m_ssh.start(&error), qPrintable(error));
        const QString dir = m_dir.filePath(QStringLiteral("profiled"));
        const test::CliResult r = cli({ QStringLiteral("profile"), QStringLiteral("--model"),
            QStringLiteral("cnn"), QStringLiteral("--out"), dir, QStringLiteral("--device"),
            QStringLiteral("cpu"), QStringLiteral("--top"), QStringLiteral("2"), QStringLiteral("--python"),
            test::testPython() });
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        // Goals off: a kernel retired after one good step would leave too few experiments to compare.
        const test::CliResult rules
            = cli({ QStringLiteral("rules"), dir, QStringLiteral("--speedup-over-baseline"),
                QStringLiteral("0"), QStringLiteral("--roof-pct"), QStringLiteral("0") });
        QVERIFY2(rules.exitCode == 0, qPrintable(describe(rules)));
        m_profiled = dir;
    }

    // The far side is another machine as far as files go: none of the test's folders is there, its
    // own folder is. Without bubblewrap this is a missing service (a failure where CI requires
    // services); where bwrap is installed but the kernel refuses its namespaces it can never work, so
    // it skips with the reason even then.
    void farSideSeesNothingOfTheCoordinator()
    {
        if (test::SshServer::bwrapPath().isEmpty())
            AK_SKIP_WITHOUT_SERVICE(m_isolation);
        if (!m_isolation.isEmpty())
            QSKIP(qPrintable(QStringLiteral("the far side is not isolated: ") + m_isolation));
        QString out;
        QCOMPARE(m_ssh.runThere(QStringLiteral("test -d %1").arg(m_ssh.farCache()), &out), 0);
        // Here, the profiled run and its git store; there, nothing.
        for (const QString &path : { m_profiled, QString(m_profiled + QStringLiteral("/.git/HEAD")) }) {
            QVERIFY2(QFileInfo::exists(path), qPrintable(path));
            QVERIFY2(
                m_ssh.runThere(QStringLiteral("test -e %1").arg(path), &out) == 1, qPrintable(path + out));
        }
        QCOMPARE(m_ssh.runThere(QStringLiteral("ls -A %1").arg(m_dir.path()), &out), 0);
        QVERIFY2(out.trimmed().isEmpty(), qPrintable(out)); // an empty folder there
    }

    // The same proposals (replayed from a local tune run) judged through ssh: the same kernels, the
    // same sources, the same correctness; the far side fetched the worker's files into its own cache.
    void sshRunMatchesTheLocalRun()
    {
        const QString local = copyOfRun(QStringLiteral("local"));
        const QString remote = copyOfRun(QStringLiteral("remote"));
        QVERIFY(!local.isEmpty() && !remote.isEmpty());
        test::CliResult r = cli(runArgs(local,
            { QStringLiteral("--agent"), QStringLiteral("tune"), QStringLiteral("--seed"),
                QStringLiteral("7"), QStringLiteral("--experiments"), QStringLiteral("4"),
                QStringLiteral("--python"), test::testPython() }));
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        r = cli(runArgs(remote,
            { QStringLiteral("--agent"), QStringLiteral("replay"), QStringLiteral("--replay"), local,
                QStringLiteral("--experiments"), QStringLiteral("4"), QStringLiteral("--launcher"),
                m_ssh.launcher(), QStringLiteral("--python"), test::testPython() }));
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));

        const RunSnapshotPtr a = RunLoader::load(local);
        const RunSnapshotPtr b = RunLoader::load(remote);
        QVERIFY(a && b);
        QList<const Experiment *> ea, eb;
        for (const Experiment &e : a->experiments)
            if (e.status != ExperimentStatus::Baseline)
                ea << &e;
        for (const Experiment &e : b->experiments)
            if (e.status != ExperimentStatus::Baseline)
                eb << &e;
        QCOMPARE(eb.size(), ea.size());
        QVERIFY(!ea.isEmpty());
        auto correct = [](ExperimentStatus s) {
            return s == ExperimentStatus::Kept || s == ExperimentStatus::Reverted;
        };
        QString error;
        const std::unique_ptr<GitRepo> gitA = GitRepo::open(local, &error);
        const std::unique_ptr<GitRepo> gitB = GitRepo::open(remote, &error);
        QVERIFY2(gitA && gitB, qPrintable(error));
        for (int i = 0; i < ea.size(); ++i) {
            QCOMPARE(eb[i]->kernel, ea[i]->kernel);
            // The kernel.py judged (each experiment's commit): the replayed proposal, byte for byte.
            const QString path = RunStore::kernelPath(ea[i]->kernel);
            const QByteArray source = gitA->readBlob(ea[i]->commit, path, &error);
            QVERIFY2(!source.isEmpty(), qPrintable(error));
            QCOMPARE(gitB->readBlob(eb[i]->commit, path, &error), source);
            QCOMPARE(correct(eb[i]->status), correct(ea[i]->status));
            // Judged in the same kind of sandbox: the far side's own bubblewrap works inside the
            // test's namespace too.
            QCOMPARE(eb[i]->metrics.sandbox.section(QLatin1Char(' '), 0, 0),
                ea[i]->metrics.sandbox.section(QLatin1Char(' '), 0, 0));
            QVERIFY2(eb[i]->failure.isEmpty() == ea[i]->failure.isEmpty() || correct(ea[i]->status),
                qPrintable(eb[i]->failure + QStringLiteral(" | ") + ea[i]->failure));
        }
        // Baselines were measured through ssh too.
        for (const Experiment &e : b->experiments)
            if (e.status == ExperimentStatus::Baseline && e.kernel == eb.first()->kernel)
                QVERIFY(Metrics::has(e.metrics.latencyUs));
        // The far side's own cache holds the worker's files; run.json remembers the launcher.
        const QStringList fetched = QDir(m_ssh.farCache() + QStringLiteral("/autokernel/remote"))
                                        .entryList({ QStringLiteral("python-*") }, QDir::Dirs);
        QCOMPARE(fetched.size(), 1); // (this suite links core only: its own hash is not the CLI's)
        QVERIFY(QFileInfo::exists(m_ssh.farCache() + QStringLiteral("/autokernel/remote/") + fetched.first()
            + QStringLiteral("/harness/bench.py")));
        QCOMPARE(b->config.workerLauncher, m_ssh.launcher());
        QCOMPARE(b->config.workerPython, test::testPython());
        // ... and all of it went through the channel: the run directory is not there at all.
        if (m_isolation.isEmpty()) {
            QString out;
            QVERIFY2(m_ssh.runThere(QStringLiteral("test -e %1").arg(remote), &out) == 1, qPrintable(out));
            QVERIFY2(m_ssh.runThere(QStringLiteral("test -e %1").arg(local), &out) == 1, qPrintable(out));
        }
        qInfo("%d experiments alike through ssh, judged in %s (%s)", int(ea.size()),
            qPrintable(eb.first()->metrics.sandbox),
            m_isolation.isEmpty() ? "the far side could not see the run directories"
                                  : qPrintable(QStringLiteral("shared folders: ") + m_isolation));
    }

    // The ssh client killed in the middle of a benchmark: that experiment is a crash that says the
    // remote worker was lost, the worker is started again, and the loop goes on to its budget.
    void killedSshIsACrashAndTheLoopGoesOn()
    {
        const QString dir = copyOfRun(QStringLiteral("kill"));
        QVERIFY(!dir.isEmpty());
        // run.json's launcher (written by this --launcher) is what a plain resume would use.
        QProcess p;
        p.setProcessEnvironment(environment());
        p.start(test::cliPath(),
            runArgs(dir,
                { QStringLiteral("--agent"), QStringLiteral("tune"), QStringLiteral("--experiments"),
                    QStringLiteral("8"), QStringLiteral("--launcher"), m_ssh.launcher(),
                    QStringLiteral("--python"), test::testPython() }));
        QVERIFY(p.waitForStarted());
        QElapsedTimer clock;
        clock.start();
        QSet<int> killedIn;
        int kills = 0;
        while (p.state() == QProcess::Running && clock.elapsed() < 150000 && kills < 3) {
            const RunSnapshotPtr run = RunLoader::load(dir);
            const Experiment *running = nullptr;
            if (run)
                for (const Experiment &e : run->experiments)
                    if (e.status == ExperimentStatus::Running)
                        running = &e;
            if (running && !killedIn.contains(running->id)) {
                QThread::msleep(300); // into the benchmark (a quick CPU bench takes a second or more)
                const QList<qint64> ssh = childrenRunning(p.processId(), QStringLiteral("ssh"));
                for (qint64 pid : ssh)
                    ::kill(pid_t(pid), SIGKILL);
                if (!ssh.isEmpty()) {
                    killedIn.insert(running->id);
                    ++kills;
                }
                // One landed inside a benchmark: the run shows it as a crash when that is recorded.
                QThread::msleep(1500);
                const RunSnapshotPtr now = RunLoader::load(dir);
                const Experiment *e = now ? now->experiment(running->id) : nullptr;
                if (e && e->status == ExperimentStatus::Crashed)
                    break;
            }
            QThread::msleep(20);
        }
        QVERIFY(p.waitForFinished(180000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 0);
        const RunSnapshotPtr run = RunLoader::load(dir);
        QVERIFY(run);
        const Experiment *crashed = nullptr;
        for (const Experiment &e : run->experiments)
            if (killedIn.contains(e.id) && e.status == ExperimentStatus::Crashed)
                crashed = &e;
        QVERIFY2(crashed, qPrintable(err));
        QVERIFY2(crashed->failure.contains(QStringLiteral("ssh")), qPrintable(crashed->failure));
        int after = 0;
        for (const Experiment &e : run->experiments)
            after += e.id > crashed->id && e.status != ExperimentStatus::Baseline ? 1 : 0;
        QVERIFY2(after >= 1, qPrintable(err)); // the loop went on with a fresh worker
        for (const Experiment &e : run->experiments)
            QVERIFY(e.status != ExperimentStatus::Running);
        qInfo("%d kill(s); experiment %d: %s; %d experiments after it", kills, crashed->id,
            qPrintable(crashed->failure), after);
    }

    // The far side's Python cannot import torch: a harness problem of that machine, not of any
    // kernel. The loop pauses (to start the worker again later) instead of burning every kernel,
    // and nothing is recorded against a kernel.
    void remotePythonWithoutTorchPauses()
    {
        const QString dir = copyOfRun(QStringLiteral("notorch"));
        QVERIFY(!dir.isEmpty());
        // A python3 whose `import torch` fails: a torch module that refuses, first on its path. Both
        // are the far side's, so they live in its folder.
        const QString hidden = m_ssh.farDir() + QStringLiteral("/notorch");
        const QString python = m_ssh.farDir() + QStringLiteral("/python-without-torch");
        QVERIFY(QDir().mkpath(hidden));
        QFile module(hidden + QStringLiteral("/torch.py"));
        QVERIFY(module.open(QIODevice::WriteOnly));
        module.write("raise ImportError(\"No module named 'torch' (hidden by the test)\")\n");
        module.close();
        QFile wrapper(python);
        QVERIFY(wrapper.open(QIODevice::WriteOnly));
        wrapper.write(QStringLiteral("#!/bin/sh\nPYTHONPATH='%1' exec '%2' \"$@\"\n")
                          .arg(hidden, test::testPython())
                          .toUtf8());
        wrapper.close();
        QVERIFY(wrapper.setPermissions(wrapper.permissions() | QFileDevice::ExeOwner));
        const int experiments = int(RunLoader::load(dir)->experiments.size());

        QProcess p;
        p.setProcessEnvironment(environment());
        p.start(test::cliPath(),
            runArgs(dir,
                { QStringLiteral("--agent"), QStringLiteral("tune"), QStringLiteral("--experiments"),
                    QStringLiteral("4"), QStringLiteral("--launcher"), m_ssh.launcher(),
                    QStringLiteral("--python"), python }));
        QVERIFY(p.waitForStarted());
        QString err;
        QElapsedTimer clock;
        clock.start();
        while (p.state() == QProcess::Running && !err.contains(QStringLiteral("paused: "))
            && clock.elapsed() < 60000) {
            p.waitForReadyRead(200);
            err += QString::fromUtf8(p.readAllStandardError());
        }
        const bool paused = err.contains(QStringLiteral("paused: "));
        const bool stillRunning = p.state() == QProcess::Running; // paused, not ended
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(60000));
        err += QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(paused && stillRunning, qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("the remote worker cannot run the harness")), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("hidden by the test")), qPrintable(err)); // the cause, in words
        QVERIFY2(p.exitCode() == 0, qPrintable(err)); // stopped by the user, not a failed run
        const RunSnapshotPtr run = RunLoader::load(dir);
        QVERIFY(run);
        for (const KernelRecord &k : run->kernels)
            QVERIFY2(k.state != KernelState::Done && k.state != KernelState::Skipped, qPrintable(k.folder));
        QCOMPARE(int(run->experiments.size()), experiments); // nothing charged to a kernel
        for (const Experiment &e : run->experiments)
            QVERIFY(!Metrics::has(e.metrics.latencyUs)); // no baseline was measured either
        qInfo("%s", qPrintable(err.section(QStringLiteral("paused: "), 1).section(QLatin1Char('\n'), 0, 0)));
    }
};

AK_TEST_CLASS(RemoteSshTest)
#include "tst_remotessh.moc"
