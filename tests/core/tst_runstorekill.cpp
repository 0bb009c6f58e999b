#include "gitrepo.h"
#include "runconfig.h"
#include "runloader.h"
#include "runstore.h"
#include "testregistry.h"

#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <csignal>

using namespace ak;
using nlohmann::json;

// The crash-repair path for real: a child process records experiments and is killed with SIGKILL at
// a random moment, over and over. After every kill the run must open (repair), load without
// warnings, keep every experiment the child reported as finished with its outcome, and hold no
// running experiment; every move-on change the child reported is logged, and run.json and the best
// commit show the last logged rules; the object database and refs must be consistent (libgit2
// check, plus `git fsck` at the end when a git binary is installed).
class RunStoreKillTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void killedWriterNeverLosesFinishedExperiments()
    {
        QTemporaryDir tmp;
        QString error;
        {
            auto store = RunStore::create(tmp.path(), json { { "model", "kill-test" } }, &error);
            QVERIFY2(store, qPrintable(error));
            int rank = 1;
            for (const char *name : { "matmul", "softmax", "rmsnorm" }) {
                KernelRecord k;
                k.rank = rank++;
                k.name = QString::fromLatin1(name);
                QVERIFY2(store->addKernel(k, "BASE = 1\n", &error).id > 0, qPrintable(error));
            }
        }
        const int kills = qEnvironmentVariableIntValue("AK_KILL_TEST_ROUNDS") > 0
            ? qEnvironmentVariableIntValue("AK_KILL_TEST_ROUNDS")
            : 100;
        QHash<int, QString> finished; // id -> outcome reported by a child
        int rulesReported = 0; // move-on changes reported by the children
        int rulesRepaired = 0; // opens that wrote a logged change run.json did not show yet
        QRandomGenerator rng(20240601);
        for (int round = 0; round < kills; ++round) {
            QProcess child;
            child.start(QStringLiteral(AK_KILLCHILD), { tmp.path() });
            QVERIFY(child.waitForStarted());
            // Even rounds: a random moment after the child has finished its first experiment, so it
            // dies while recording (however slow a loaded machine makes it). Odd rounds: a random moment from
            // its start, which also hits the open and the repair itself.
            QByteArray out;
            if (round % 2 == 0) {
                while (!out.contains("F ") && child.waitForReadyRead(10000))
                    out += child.readAllStandardOutput();
                QTest::qSleep(int(rng.bounded(0, 60)));
            } else {
                QTest::qSleep(int(rng.bounded(5, 150)));
            }
            ::kill(pid_t(child.processId()), SIGKILL);
            QVERIFY(child.waitForFinished(5000));
            const QByteArray err = child.readAllStandardError();
            QVERIFY2(child.exitStatus() == QProcess::CrashExit, err.constData());
            out += child.readAllStandardOutput();
            for (const QByteArray &line : out.split('\n')) {
                const QList<QByteArray> parts = line.split(' ');
                if (parts.size() == 3 && parts[0] == "F")
                    finished.insert(parts[1].toInt(), QString::fromLatin1(parts[2]));
                else if (parts.size() == 2 && parts[0] == "R")
                    ++rulesReported;
            }

            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(QStringLiteral("round %1: %2").arg(round).arg(error)));
            const RunSnapshot &s = store->state();
            rulesRepaired += store->repairNotes()
                                 .join(QLatin1Char('\n'))
                                 .contains(QLatin1String("run.json: move-on rules"))
                ? 1
                : 0;
            QVERIFY2(s.warnings.isEmpty(), qPrintable(s.warnings.join(QLatin1Char('\n'))));
            for (auto it = finished.cbegin(); it != finished.cend(); ++it) {
                const Experiment *e = s.experiment(it.key());
                QVERIFY2(
                    e, qPrintable(QStringLiteral("round %1: experiment %2 lost").arg(round).arg(it.key())));
                QCOMPARE(statusName(e->status), it.value());
            }
            for (const Experiment &e : s.experiments)
                QVERIFY(e.status != ExperimentStatus::Running);
            for (const KernelRecord &k : s.kernels)
                QCOMPARE(store->repo().resolveRef(
                             QStringLiteral("refs/heads/kernels/") + k.folder.section(QLatin1Char('/'), -1)),
                    k.head);
            QVERIFY2(s.moveOnChanges.size() >= rulesReported,
                qPrintable(QStringLiteral("round %1: a move-on change was lost").arg(round)));
            QFile runJson(tmp.filePath(QStringLiteral("run.json")));
            QVERIFY(runJson.open(QIODevice::ReadOnly));
            const QByteArray onDisk = runJson.readAll();
            QCOMPARE(onDisk, s.runJson);
            QCOMPARE(
                store->repo().blobIdAt(s.bestCommit, QStringLiteral("run.json")), GitRepo::blobHash(onDisk));
            if (!s.moveOnChanges.isEmpty()) {
                RunConfig config;
                QVERIFY(RunConfig::parse(onDisk, &config));
                QVERIFY(config.moveOnWarning.isEmpty());
                QCOMPARE(config.moveOn, s.moveOnChanges.constLast().rules);
                QCOMPARE(s.config.moveOn, config.moveOn); // the snapshot's parse is the file's
            }
            if (round % 10 == 9)
                QVERIFY2(store->repo().verify(&error), qPrintable(error));
        }
        const RunSnapshotPtr snap = RunLoader::load(tmp.path(), &error);
        QVERIFY(snap && snap->warnings.isEmpty());
        const int crashed = int(std::count_if(snap->experiments.cbegin(), snap->experiments.cend(),
            [](const Experiment &e) { return e.status == ExperimentStatus::Crashed; }));
        qInfo("%d kills, %d experiments finished by children, %d loaded, %d repaired as crash, %d move-on "
              "changes logged "
              "(%d written to run.json by the repair)",
            kills, int(finished.size()), int(snap->experiments.size()), crashed,
            int(snap->moveOnChanges.size()), rulesRepaired);
        QVERIFY2(finished.size() >= kills / 2,
            "the children recorded too few experiments for the test to mean much");
        {
            auto repo = GitRepo::open(tmp.path(), &error);
            QVERIFY2(repo->verify(&error), qPrintable(error));
        }

        const QString git = QStandardPaths::findExecutable(QStringLiteral("git"));
        if (git.isEmpty())
            return;
        QProcess fsck;
        fsck.setWorkingDirectory(tmp.path());
        fsck.start(
            git, { QStringLiteral("fsck"), QStringLiteral("--full"), QStringLiteral("--no-dangling") });
        QVERIFY(fsck.waitForFinished(60000));
        const QByteArray out = fsck.readAllStandardOutput() + fsck.readAllStandardError();
        QVERIFY2(fsck.exitCode() == 0, out.constData());
        QProcess log;
        log.setWorkingDirectory(tmp.path());
        log.start(git, { QStringLiteral("log"), QStringLiteral("--all"), QStringLiteral("--format=%H") });
        QVERIFY(log.waitForFinished(60000));
        const int commits = int(log.readAllStandardOutput().count('\n'));
        QVERIFY2(commits >= snap->experiments.size(),
            qPrintable(QStringLiteral("git log --all: %1 commits").arg(commits)));
    }
};

AK_TEST_CLASS(RunStoreKillTest)
#include "tst_runstorekill.moc"
