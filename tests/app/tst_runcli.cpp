// `autokernel-cli run` as a user or a script runs it: on a freshly profiled bundled model, with a
// budget, killed with SIGKILL in the middle of an experiment and resumed, and with bad arguments.
#include "experiment.h"
#include "gitrepo.h"
#include "runloader.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>
#include <memory>

using namespace ak;

namespace {

bool finishedStatus(ExperimentStatus s)
{
    return s != ExperimentStatus::Running && s != ExperimentStatus::Baseline;
}

int countStatus(const RunSnapshot &run, bool (*pred)(ExperimentStatus))
{
    int n = 0;
    for (const Experiment &e : run.experiments)
        n += pred(e.status) ? 1 : 0;
    return n;
}

bool isRunning(ExperimentStatus s)
{
    return s == ExperimentStatus::Running;
}

} // namespace

class RunCliTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_profiled; // a run made in initTestCase, for the argument checks

    using Result = test::CliResult;
    static QString cli() { return test::cliPath(); }
    static QString python() { return test::testPython(); }

    // The CLI's environment here: this suite's own cache directory.
    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        return env;
    }

    void prepare(QProcess &p, const QStringList &args)
    {
        p.setProcessEnvironment(environment());
        p.setProgram(cli());
        p.setArguments(args);
    }

    Result cliRun(const QStringList &args, int timeoutMs = 120000)
    {
        return test::runCli(args, timeoutMs, environment());
    }

    // `autokernel-cli profile --model cnn --device cpu --top 2` into a new run directory.
    QString profile(const QString &name)
    {
        const QString dir = m_dir.filePath(name);
        const Result r = cliRun({ QStringLiteral("profile"), QStringLiteral("--model"), QStringLiteral("cnn"),
            QStringLiteral("--out"), dir, QStringLiteral("--device"), QStringLiteral("cpu"),
            QStringLiteral("--top"), QStringLiteral("2"), QStringLiteral("--python"), python() });
        if (r.exitCode != 0) {
            qWarning("profile failed (%d):\n%s\n%s", r.exitCode, qPrintable(r.out), qPrintable(r.err));
            return QString();
        }
        return dir;
    }

    QStringList runArgs(const QString &dir, const QStringList &more)
    {
        return QStringList { QStringLiteral("run"), dir, QStringLiteral("--agent"), QStringLiteral("tune"),
            QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--python"), python() }
        + more;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(cli()), "AUTOKERNEL_CLI must point at the built binary");
        QVERIFY(m_dir.isValid());
        m_profiled = profile(QStringLiteral("args"));
        QVERIFY(!m_profiled.isEmpty());
        const RunSnapshotPtr run = RunLoader::load(m_profiled);
        QVERIFY(run);
        QCOMPARE(run->kernels.size(), 2);
    }

    void budgetRunRecordsExperiments()
    {
        const QString dir = profile(QStringLiteral("budget"));
        QVERIFY(!dir.isEmpty());
        // Goals off: with them one kernel can be retired after two good steps, and on a loaded 2-core
        // machine quick timing can refuse the other's baseline; the budget, not the goals, ends this run.
        const Result rules = cliRun({ QStringLiteral("rules"), dir, QStringLiteral("--speedup-over-baseline"),
            QStringLiteral("0"), QStringLiteral("--roof-pct"), QStringLiteral("0") });
        QVERIFY2(rules.exitCode == 0, qPrintable(rules.err));
        const Result r = cliRun(runArgs(dir, { QStringLiteral("--budget"), QStringLiteral("60s") }), 120000);
        QVERIFY2(
            r.exitCode == 0, qPrintable(QStringLiteral("exit %1\n%2\n%3").arg(r.exitCode).arg(r.out, r.err)));
        QVERIFY2(r.seconds < 75, qPrintable(QString::number(r.seconds)));
        QVERIFY2(r.err.contains(QStringLiteral("ended: ")), qPrintable(r.err));
        const RunSnapshotPtr run = RunLoader::load(dir);
        QVERIFY(run);
        QVERIFY2(run->warnings.isEmpty(), qPrintable(run->warnings.join(QLatin1Char('\n'))));
        const int finished = countStatus(*run, finishedStatus);
        QVERIFY2(finished >= 3, qPrintable(r.err));
        QCOMPARE(countStatus(*run, isRunning), 0);
        // The summary table: a header and one row per kernel, then the totals line.
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral(
                     "kernel\\s+state\\s+exps\\s+kept\\s+base us\\s+torch us\\s+best us\\s+speedup"))),
            qPrintable(r.out));
        for (const KernelRecord &k : run->kernels)
            QVERIFY2(r.out.contains(QRegularExpression(QLatin1Char('\n') + KernelRecord::keyOf(k.folder)
                         + QStringLiteral(
                             "\\s+(done|active|waiting|skipped|pytorch wins|not pluggable)\\s+\\d+"))),
                qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("%1 experiments (").arg(finished)), qPrintable(r.out));
        qInfo("%d experiments in %.1f s", finished, r.seconds);
    }

    // SIGKILL in the middle of an experiment, then resume: the interrupted experiment is a crash,
    // nothing finished is lost, ids continue and the git repository is consistent.
    void killAndResume()
    {
        const QString dir = profile(QStringLiteral("kill"));
        QVERIFY(!dir.isEmpty());
        // The goals that retire a kernel after one good step (2x over its baseline, 90% of roof) are
        // off: with them a quick CPU run could finish before a kill finds an experiment under way.
        const Result rules = cliRun({ QStringLiteral("rules"), dir, QStringLiteral("--speedup-over-baseline"),
            QStringLiteral("0"), QStringLiteral("--roof-pct"), QStringLiteral("0") });
        QVERIFY2(rules.exitCode == 0, qPrintable(rules.err));
        RunSnapshotPtr atKill;
        QString log;
        // A kill can land between two experiments (one finished, the next not begun); then run again.
        for (int attempt = 0; attempt < 3 && !atKill; ++attempt) {
            QProcess p;
            prepare(p, runArgs(dir, { QStringLiteral("--quick") }));
            p.start();
            QVERIFY(p.waitForStarted());
            QElapsedTimer clock;
            clock.start();
            QSet<int> runningSeen;
            bool killed = false;
            while (!killed && p.state() == QProcess::Running && clock.elapsed() < 60000) {
                const RunSnapshotPtr run = RunLoader::load(dir);
                if (run && countStatus(*run, finishedStatus) >= 3) {
                    for (const Experiment &e : run->experiments) {
                        // Kill as soon as an experiment is seen begun: its benchmark is surely still running.
                        if (e.status == ExperimentStatus::Running && !runningSeen.contains(e.id)) {
                            ::kill(pid_t(p.processId()), SIGKILL);
                            killed = true;
                            break;
                        }
                    }
                }
                if (run)
                    for (const Experiment &e : run->experiments)
                        if (e.status == ExperimentStatus::Running)
                            runningSeen.insert(e.id);
                QThread::msleep(3);
            }
            QVERIFY(p.waitForFinished(30000));
            log += QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(killed, qPrintable(QStringLiteral("the loop ended before it could be killed:\n") + log));
            QCOMPARE(p.exitStatus(), QProcess::CrashExit);
            const RunSnapshotPtr run = RunLoader::load(dir);
            QVERIFY(run);
            if (countStatus(*run, isRunning) > 0)
                atKill = run;
        }
        QVERIFY2(atKill, "no kill landed inside an experiment in 3 attempts");
        QVector<int> interrupted;
        int maxId = 0;
        for (const Experiment &e : atKill->experiments) {
            if (e.status == ExperimentStatus::Running)
                interrupted << e.id;
            maxId = std::max(maxId, e.id);
        }
        QCOMPARE(interrupted.size(), 1);

        const Result r = cliRun(runArgs(
            dir, { QStringLiteral("--quick"), QStringLiteral("--experiments"), QStringLiteral("3") }));
        QVERIFY2(
            r.exitCode == 0, qPrintable(QStringLiteral("exit %1\n%2\n%3").arg(r.exitCode).arg(r.out, r.err)));
        QVERIFY2(r.err.contains(QStringLiteral("repair")), qPrintable(r.err));
        const RunSnapshotPtr after = RunLoader::load(dir);
        QVERIFY(after);
        QVERIFY2(after->warnings.isEmpty(), qPrintable(after->warnings.join(QLatin1Char('\n'))));
        QCOMPARE(countStatus(*after, isRunning), 0);

        const Experiment *crashed = after->experiment(interrupted.first());
        QVERIFY(crashed);
        QCOMPARE(crashed->status, ExperimentStatus::Crashed);
        QVERIFY(!crashed->failure.isEmpty());
        // Nothing finished before the kill is lost or changed.
        for (const Experiment &e : atKill->experiments) {
            const Experiment *now = after->experiment(e.id);
            QVERIFY2(now, qPrintable(QString::number(e.id)));
            if (e.status == ExperimentStatus::Running)
                continue; // repaired: a final commit with the crash outcome
            QCOMPARE(now->status, e.status);
            if (e.status == ExperimentStatus::Baseline && !Metrics::has(e.metrics.latencyUs))
                continue; // a kernel not reached yet: its baseline is measured after the resume
            QCOMPARE(now->commit, e.commit);
            QCOMPARE(now->kernel, e.kernel);
            QCOMPARE(Metrics::has(now->metrics.latencyUs), Metrics::has(e.metrics.latencyUs));
            if (Metrics::has(e.metrics.latencyUs))
                QCOMPARE(now->metrics.latencyUs, e.metrics.latencyUs);
        }
        // Ids continue after the highest one, without gaps; at most the 3 asked for.
        QVector<int> fresh;
        for (const Experiment &e : after->experiments)
            if (e.id > maxId)
                fresh << e.id;
        QVERIFY2(
            !fresh.isEmpty() || r.err.contains(QStringLiteral("every kernel is done")), qPrintable(r.err));
        QVERIFY2(fresh.size() <= 3, qPrintable(r.err));
        for (int i = 0; i < fresh.size(); ++i)
            QCOMPARE(fresh[i], maxId + 1 + i);
        QVERIFY(r.out.contains(QStringLiteral("%1 experiments (").arg(fresh.size())));

        // git: every ref resolves, every object reads, every experiment has its ref and outcome.
        QString error;
        std::unique_ptr<GitRepo> repo = GitRepo::open(dir, &error);
        QVERIFY2(repo, qPrintable(error));
        QVERIFY2(repo->verify(&error), qPrintable(error));
        for (const Experiment &e : after->experiments) {
            QCOMPARE(repo->resolveRef(QStringLiteral("refs/experiments/%1").arg(e.id)), e.commit);
            if (e.status != ExperimentStatus::Baseline)
                QVERIFY2(
                    repo->messageOf(e.commit).contains(QStringLiteral("Outcome: ") + statusName(e.status)),
                    qPrintable(repo->messageOf(e.commit)));
        }
        for (const KernelRecord &k : after->kernels)
            QCOMPARE(repo->resolveRef(QStringLiteral("refs/heads/kernels/") + KernelRecord::keyOf(k.folder)),
                k.head);
        QVERIFY(!QFile::exists(dir + QStringLiteral("/.git/autokernel.lock")));
        qInfo("killed in experiment %d after %d finished; resumed with %d more", interrupted.first(),
            countStatus(*atKill, finishedStatus), int(fresh.size()));
    }

    void badArgumentsAreUsageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("budget") << QStringList {
            QStringLiteral("--budget"), QStringLiteral("10x")
        } << QStringLiteral("--budget must be a duration such as 90s, 10m, 2h or 1h30m, not '10x'");
        QTest::newRow("empty budget")
            << QStringList { QStringLiteral("--budget"), QStringLiteral("0s") } << QStringLiteral("--budget");
        QTest::newRow("device") << QStringList { QStringLiteral("--device"), QStringLiteral("gpu") }
                                << QStringLiteral("--device: 'gpu' is not cpu, cuda or cuda:N");
        QTest::newRow("device list") << QStringList { QStringLiteral("--device"),
            QStringLiteral("cuda:0,tpu") }
                                     << QStringLiteral("'tpu'");
        QTest::newRow("experiments") << QStringList { QStringLiteral("--experiments"),
            QStringLiteral("many") } << QStringLiteral("--experiments must be a positive number");
        QTest::newRow("agent") << QStringList { QStringLiteral("--agent"), QStringLiteral("oracle") }
                               << QStringLiteral("--agent must be one of");
        QTest::newRow("context tokens") << QStringList { QStringLiteral("--context-tokens"),
            QStringLiteral("32k") } << QStringLiteral("--context-tokens must be a positive number of tokens");
        QTest::newRow("max tokens") << QStringList { QStringLiteral("--max-tokens"), QStringLiteral("0") }
                                    << QStringLiteral("--max-tokens must be a positive number of tokens");
    }
    void badArgumentsAreUsageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const QByteArray logBefore = [this] {
            QFile f(m_profiled + QStringLiteral("/experiments.jsonl"));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        const Result r = cliRun(QStringList { QStringLiteral("run"), m_profiled } + args, 30000);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QFile f(m_profiled + QStringLiteral("/experiments.jsonl"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), logBefore); // nothing ran
    }

    void missingRunDirectoryIsUsageError()
    {
        const QString missing = m_dir.filePath(QStringLiteral("no-such-run"));
        Result r = cliRun(
            { QStringLiteral("run"), missing, QStringLiteral("--device"), QStringLiteral("cpu") }, 30000);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(missing) && r.err.contains(QStringLiteral("no such directory")),
            qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(missing));
        // A folder that is not a run.
        QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("empty"))));
        r = cliRun({ QStringLiteral("run"), m_dir.filePath(QStringLiteral("empty")) }, 30000);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("not a run directory")), qPrintable(r.err));
        r = cliRun({ QStringLiteral("run") }, 30000);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("give one run directory")), qPrintable(r.err));
    }
};

AK_TEST_CLASS(RunCliTest)
#include "tst_runcli.moc"
