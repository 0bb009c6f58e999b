// LocalLoop's steering when no loop runs: it becomes the run's writer for a moment and applies the
// request, the same path (a queued run-directory request) it uses while its threads run.
#include "experimentlooprig.h"
#include "loop/localloop.h"
#include "loop/orchestrator.h"
#include "moveonrules.h"
#include "requestqueue.h"
#include "runloader.h"
#include "runstore.h"
#include "testregistry.h"

#include <QDir>
#include <QSignalSpy>

using namespace ak;
using namespace ak::test;

namespace {

// The rig's own loop and store let go, so nobody writes the run: options for a LocalLoop on it.
LoopOptions stoppedOn(Rig &rig)
{
    rig.loop.reset();
    rig.session.reset();
    LoopOptions options;
    options.runDir = rig.dir;
    return options;
}

} // namespace

class LocalLoopTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void rulesAndPinApplyWhenStopped()
    {
        Rig rig;
        QVERIFY2(rig.create(), qPrintable(rig.error));
        LocalLoop loop(stoppedOn(rig));
        QVERIFY(loop.capabilities().testFlag(LoopControl::CanEditRules));
        QSignalSpy done(&loop, &LoopControl::actionFinished);
        QSignalSpy failed(&loop, &LoopControl::actionFailed);

        MoveOnRules rules;
        rules.maxConsecutiveReverts = 2;
        rules.roofPct = 75;
        loop.setMoveOnRules(rules);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(done.count(), 1);
        QCOMPARE(done.at(0).at(0).toString(), QStringLiteral("setMoveOnRules"));
        RunSnapshotPtr run = RunLoader::load(rig.dir);
        QVERIFY(run);
        QCOMPARE(Orchestrator::rulesOf(*run).maxConsecutiveReverts, 2);
        QCOMPARE(Orchestrator::rulesOf(*run).roofPct, 75.0);

        loop.pin(kB);
        QCOMPARE(failed.count(), 0);
        run = RunLoader::load(rig.dir);
        QCOMPARE(run->kernel(kB)->state, KernelState::Pinned);
        // A request that cannot be carried out says why and changes nothing.
        loop.revert(kA, 999);
        QVERIFY2(failed.count() == 1, qPrintable(done.last().at(1).toString()));
        QVERIFY(!failed.at(0).at(1).toString().isEmpty());
    }

    void reviewModeAppliesWhenStopped()
    {
        Rig rig;
        QVERIFY2(rig.create(), qPrintable(rig.error));
        LocalLoop loop(stoppedOn(rig));
        QVERIFY(loop.capabilities().testFlag(LoopControl::CanSetReviewMode));
        QSignalSpy done(&loop, &LoopControl::actionFinished);
        QSignalSpy failed(&loop, &LoopControl::actionFailed);
        QVERIFY(!RunLoader::load(rig.dir)->reviewMode);

        loop.setReviewMode(true);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
        QCOMPARE(done.count(), 1);
        QCOMPARE(done.at(0).at(0).toString(), QStringLiteral("setReviewMode"));
        QVERIFY(RunLoader::load(rig.dir)->reviewMode);
        QVERIFY(
            QDir(RequestQueue::dir(rig.dir)).entryList(QDir::Files).isEmpty()); // applied, not left queued

        loop.setReviewMode(false);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(done.count(), 2);
        QVERIFY(!RunLoader::load(rig.dir)->reviewMode);
    }

    void slurmRunIsNotStartedLocally()
    {
        // run.json of an `autokernel-cli run --slurm` run: the window's Loop ▸ Start gives no launcher.
        Rig rig;
        QVERIFY2(rig.create({ { "worker", { { "slurm", "--ntasks=1" }, { "slurm_job", 42 } } } }),
            qPrintable(rig.error));
        LocalLoop loop(stoppedOn(rig));
        QSignalSpy failed(&loop, &LoopControl::actionFailed);
        QSignalSpy states(&loop, &LoopControl::stateChanged);
        loop.start();
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("start"));
        const QString why = failed.at(0).at(1).toString();
        QVERIFY2(why.contains(QStringLiteral("autokernel-cli run --slurm '--ntasks=1'")), qPrintable(why));
        QVERIFY2(why.contains(QStringLiteral("start it the same way")), qPrintable(why));
        QCOMPARE(loop.state(), LoopControl::State::Stopped);
        QVERIFY(states.isEmpty()); // no worker thread was started, not even for a moment
        // The run keeps its Slurm setting and is not locked: the CLI can start it now.
        const RunSnapshotPtr run = RunLoader::load(rig.dir);
        QVERIFY(run);
        QCOMPARE(run->config.workerSlurm, QStringLiteral("--ntasks=1"));
        QString error;
        QVERIFY2(RunStore::open(rig.dir, &error), qPrintable(error));
    }

    void startWithNothingLeftSaysSo()
    {
        // #41: Start on a run whose kernels are all pinned or skipped started a loop that ended at
        // once, silently. It says why now (the window shows it in its banner) and starts nothing.
        Rig rig;
        QVERIFY2(rig.create(), qPrintable(rig.error));
        LocalLoop loop(stoppedOn(rig));
        QSignalSpy failed(&loop, &LoopControl::actionFailed);
        QSignalSpy states(&loop, &LoopControl::stateChanged);
        loop.pin(kA);
        loop.skip(kB);
        loop.skip(kC);
        QCOMPARE(failed.count(), 0);
        loop.start();
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("start"));
        QVERIFY2(failed.at(0).at(1).toString().startsWith(QStringLiteral("nothing left to do")),
            qPrintable(failed.at(0).at(1).toString()));
        QCOMPARE(loop.state(), LoopControl::State::Stopped);
        QVERIFY(states.isEmpty());
        QString error;
        QVERIFY2(RunStore::open(rig.dir, &error), qPrintable(error)); // not left locked
    }
};

AK_TEST_CLASS(LocalLoopTest)
#include "tst_localloop.moc"
