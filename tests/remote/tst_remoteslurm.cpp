// `autokernel-cli run --slurm ARGS` against a real single-node Slurm the suite starts itself
// (slurmcluster.h): one allocation, each device's worker an srun step in it; a step cancelled in the
// middle of a benchmark is a recorded crash and the run goes on; when the loop ends (its own end, a
// Ctrl-C, or the allocation ending under it), no job is left.
#include "experiment.h"
#include "runloader.h"
#include "slurmcluster.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>
#include <unistd.h>

using namespace ak;

class RemoteSlurmTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    test::SlurmCluster m_slurm;
    QString m_run;

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = m_slurm.environment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        return env;
    }

    test::CliResult cli(const QStringList &args, int timeoutMs = 180000)
    {
        return test::runCli(args, timeoutMs, environment());
    }

    static QString describe(const test::CliResult &r)
    {
        return QStringLiteral("exit %1\n%2\n%3").arg(r.exitCode).arg(r.out, r.err);
    }

    // Starts a --slurm loop with room for many experiments.
    void startLoop(QProcess *p)
    {
        p->setProcessEnvironment(environment());
        p->start(test::cliPath(),
            { QStringLiteral("run"), m_run, QStringLiteral("--device"), QStringLiteral("cpu"),
                QStringLiteral("--quick"), QStringLiteral("--agent"), QStringLiteral("tune"),
                QStringLiteral("--experiments"), QStringLiteral("40"), QStringLiteral("--slurm"),
                QStringLiteral("--ntasks=1"), QStringLiteral("--python"), test::testPython() });
    }

    // Waits until the loop benchmarks an agent's proposal (not a baseline); its id, or 0.
    int waitForProposalInFlight(QProcess *p)
    {
        QElapsedTimer clock;
        clock.start();
        while (p->state() == QProcess::Running && clock.elapsed() < 60000) {
            if (const RunSnapshotPtr run = RunLoader::load(m_run))
                for (const Experiment &e : run->experiments)
                    if (e.status == ExperimentStatus::Running && e.agent == QLatin1String("tune"))
                        return e.id;
            QThread::msleep(20);
        }
        return 0;
    }

    // Starts a --slurm loop and waits until a proposal is being benchmarked in a step of its job:
    // (that experiment's id, the job), or (0, "", what the CLI said after being killed).
    struct InFlight
    {
        int experiment = 0;
        QString job;
        QString why;
    };
    InFlight startWithAProposalInFlight(QProcess *p)
    {
        startLoop(p);
        InFlight f;
        if (p->waitForStarted()) {
            f.experiment = waitForProposalInFlight(p);
            f.job = allocation();
        }
        if (f.experiment == 0 || f.job.isEmpty()) {
            p->kill(); // and show what it said
            p->waitForFinished();
            f = { 0, QString(), QString::fromUtf8(p->readAllStandardError()) };
        }
        return f;
    }

    // The allocation itself ("123"; its steps are "123.0", ...); empty when there is none.
    QString allocation() const
    {
        const QStringList jobs = m_slurm
                                     .tool(QStringLiteral("squeue"),
                                         { QStringLiteral("-h"), QStringLiteral("-o"), QStringLiteral("%i") })
                                     .split(QLatin1Char('\n'), Qt::SkipEmptyParts)
                                     .filter(QRegularExpression(QStringLiteral("^\\d+$")));
        return jobs.isEmpty() ? QString() : jobs.first();
    }

    // squeue -h after the loop ended: empty within a few seconds (the controller's bookkeeping).
    QString queueAfterTheEnd() const
    {
        QElapsedTimer t;
        t.start();
        QString queue;
        do {
            queue = m_slurm.tool(QStringLiteral("squeue"), { QStringLiteral("-h") }).trimmed();
            if (queue.isEmpty())
                break;
            QThread::msleep(200);
        } while (t.elapsed() < 10000);
        return queue;
    }

private Q_SLOTS:
    void initTestCase()
    {
        // slurmd needs root: a test run as another user skips even in CI; a missing program fails there.
        if (::geteuid() != 0)
            QSKIP("a single-node Slurm needs root (slurmd does)");
        const QString why = test::SlurmCluster::unavailableReason();
        if (!why.isEmpty())
            AK_SKIP_WITHOUT_SERVICE(why);
        QVERIFY(m_dir.isValid());
        QString error;
        QVERIFY2(m_slurm.start(&error), qPrintable(error));
        m_run = m_dir.filePath(QStringLiteral("run"));
        test::CliResult r = cli({ QStringLiteral("profile"), QStringLiteral("--model"), QStringLiteral("cnn"),
            QStringLiteral("--out"), m_run, QStringLiteral("--device"), QStringLiteral("cpu"),
            QStringLiteral("--top"), QStringLiteral("2"), QStringLiteral("--python"), test::testPython() });
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        // Room for every case's experiments: the CNN's two folders leave one the loop may work on (its
        // global-pool "reduce" is not pluggable), so no move-on rule (0: off) may retire it early.
        r = cli(test::everyMoveOnRuleOff(m_run));
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    }

    void cancelledStepIsACrashAndNoJobIsLeft()
    {
        QProcess p;
        p.setProcessEnvironment(environment());
        p.start(test::cliPath(),
            { QStringLiteral("run"), m_run, QStringLiteral("--device"), QStringLiteral("cpu"),
                QStringLiteral("--quick"), QStringLiteral("--agent"), QStringLiteral("tune"),
                QStringLiteral("--experiments"), QStringLiteral("6"), QStringLiteral("--slurm"),
                QStringLiteral("--ntasks=1"), QStringLiteral("--python"), test::testPython() });
        QVERIFY(p.waitForStarted());
        QElapsedTimer clock;
        clock.start();
        QSet<int> cancelledIn;
        QString jobSeen;
        while (p.state() == QProcess::Running && clock.elapsed() < 150000 && cancelledIn.size() < 3) {
            const RunSnapshotPtr run = RunLoader::load(m_run);
            const Experiment *running = nullptr;
            if (run)
                for (const Experiment &e : run->experiments)
                    if (e.status == ExperimentStatus::Running)
                        running = &e;
            if (running && !cancelledIn.contains(running->id)) {
                QThread::msleep(300); // into the benchmark
                // The worker's step: "JOB.STEP" (a number after the dot; not the allocation itself).
                const QStringList steps = m_slurm
                                              .tool(QStringLiteral("squeue"),
                                                  { QStringLiteral("-h"), QStringLiteral("-s"),
                                                      QStringLiteral("-o"), QStringLiteral("%i") })
                                              .split(QLatin1Char('\n'), Qt::SkipEmptyParts)
                                              .filter(QRegularExpression(QStringLiteral("^\\d+\\.\\d+$")));
                if (!steps.isEmpty()) {
                    jobSeen = steps.first().section(QLatin1Char('.'), 0, 0);
                    m_slurm.tool(QStringLiteral("scancel"), { steps.first() });
                    cancelledIn.insert(running->id);
                    QThread::msleep(1500);
                    const RunSnapshotPtr now = RunLoader::load(m_run);
                    const Experiment *e = now ? now->experiment(running->id) : nullptr;
                    if (e && e->status == ExperimentStatus::Crashed)
                        break;
                }
            }
            QThread::msleep(20);
        }
        QVERIFY(p.waitForFinished(180000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 0, qPrintable(err));
        QVERIFY2(!jobSeen.isEmpty(), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("slurm: job %1 granted").arg(jobSeen)), qPrintable(err));
        const RunSnapshotPtr run = RunLoader::load(m_run);
        QVERIFY(run);
        const Experiment *crashed = nullptr;
        for (const Experiment &e : run->experiments)
            if (cancelledIn.contains(e.id) && e.status == ExperimentStatus::Crashed)
                crashed = &e;
        QVERIFY2(crashed, qPrintable(err));
        QVERIFY2(crashed->failure.contains(QStringLiteral("Slurm step")), qPrintable(crashed->failure));
        int after = 0;
        for (const Experiment &e : run->experiments)
            after += e.id > crashed->id && e.status != ExperimentStatus::Baseline ? 1 : 0;
        QVERIFY2(after >= 1, qPrintable(err));
        // The loop ended: so did its allocation.
        const QString queue = queueAfterTheEnd();
        QVERIFY2(queue.isEmpty(), qPrintable(queue));
        // run.json keeps the salloc arguments (a resume asks for a new allocation), not the old job.
        QCOMPARE(run->config.workerSlurm, QStringLiteral("--ntasks=1"));
        QVERIFY(run->config.workerLauncher.isEmpty());
        // ... and, for the summary and `status`, the job this loop held.
        QCOMPARE(QString::number(run->config.workerSlurmJob), jobSeen);
        const test::CliResult status
            = test::runCli({ QStringLiteral("status"), m_run }, 30000, environment());
        QVERIFY2(status.out.contains(QStringLiteral("Slurm job %1 (salloc --ntasks=1)").arg(jobSeen)),
            qPrintable(status.out));
        qInfo("job %s; experiment %d: %s; %d experiments after it", qPrintable(jobSeen), crashed->id,
            qPrintable(crashed->failure), after);
    }

    // Ctrl-C in the middle of a benchmark: the CLI stops the loop and ends its allocation.
    void interruptEndsTheJob()
    {
        QProcess p;
        const auto [inFlight, job, why] = startWithAProposalInFlight(&p);
        QVERIFY2(inFlight > 0 && !job.isEmpty(), qPrintable(why));
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("slurm: job %1 granted").arg(job)), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("ended: stopped by the user")), qPrintable(err));
        // The benchmark in flight is recorded (interrupted, or its result if it finished first).
        const RunSnapshotPtr run = RunLoader::load(m_run);
        QVERIFY(run && run->experiment(inFlight));
        QVERIFY(run->experiment(inFlight)->status != ExperimentStatus::Running);
        const QString queue = queueAfterTheEnd();
        QVERIFY2(queue.isEmpty(), qPrintable(queue + QLatin1Char('\n') + err));
    }

    // The allocation ends under the loop (scancel of the job, as its time limit would): the
    // benchmark in flight is a crash, and the loop ends naming the job instead of pausing for ever
    // on an srun --jobid that can never start again.
    void endedAllocationEndsTheLoop()
    {
        QProcess p;
        const auto [inFlight, job, why] = startWithAProposalInFlight(&p);
        QVERIFY2(inFlight > 0 && !job.isEmpty(), qPrintable(why));
        QThread::msleep(300); // into the benchmark
        m_slurm.tool(QStringLiteral("scancel"), { job });
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 1, qPrintable(err));
        QVERIFY2(
            err.contains(QStringLiteral("ended: the Slurm allocation %1 ended").arg(job)), qPrintable(err));
        const RunSnapshotPtr run = RunLoader::load(m_run);
        QVERIFY(run);
        const Experiment *e = run->experiment(inFlight);
        QVERIFY(e);
        QVERIFY2(e->status == ExperimentStatus::Crashed, qPrintable(e->failure));
        QVERIFY2(e->failure.contains(QStringLiteral("Slurm step")), qPrintable(e->failure));
        int running = 0;
        for (const Experiment &x : run->experiments)
            running += x.status == ExperimentStatus::Running && x.agent != QLatin1String("baseline") ? 1 : 0;
        QCOMPARE(running, 0);
        const QString queue = queueAfterTheEnd();
        QVERIFY2(queue.isEmpty(), qPrintable(queue));
        qInfo("%s", qPrintable(err.section(QStringLiteral("ended: "), 1).section(QLatin1Char('\n'), 0, 0)));
    }
};

AK_TEST_CLASS(RemoteSlurmTest)
#include "tst_remoteslurm.moc"
