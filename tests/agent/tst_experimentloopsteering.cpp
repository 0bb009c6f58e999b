// The real ExperimentLoop over a real RunStore, between experiments: move-on rules, the agent
// running out, steering requests queued mid-run (pin, skip, revert, accept), review mode, a failed
// baseline, resuming a run, the budget. The rig is in experimentlooprig.h.
#include "experimentlooprig.h"
#include "loop/orchestrator.h"
#include "runloader.h"
#include "testregistry.h"

using namespace ak;
using namespace ak::test;

class ExperimentLoopSteeringTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exhaustedMarksTheKernelDone()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        r.agent.enqueue(agentError(AgentError::Kind::Exhausted, QStringLiteral("every configuration tried")));
        STEP(r);
        QCOMPARE(r.kernel(kA).state, KernelState::Done);
        QVERIFY2(r.kernel(kA).stateReason.contains(
                     QStringLiteral("agent has nothing left: every configuration tried")),
            qPrintable(r.kernel(kA).stateReason));
        QCOMPARE(r.experimentsOn(kA), 0); // not an experiment
        STEP(r); // the next kernel in order: its baseline
        QCOMPARE(r.lastBenchKernel(), kB);
        QVERIFY(!Orchestrator::needsBaseline(r.state(), kB));
        STEP(r);
        QCOMPARE(r.agent.contexts.last().kernelName, kB);
        QCOMPARE(RunLoader::load(r.dir)->kernel(kA)->state, KernelState::Done);
    }

    void moveOnRulesFireAndTheLoopMovesOn_data()
    {
        QTest::addColumn<QByteArray>("runJson"); // extra run.json keys
        QTest::addColumn<QList<double>>("latencies"); // bench results on A after the baseline (100 us)
        QTest::addColumn<double>("pctPeak");
        QTest::addColumn<int>("agentSleepMs");
        QTest::addColumn<QString>("reasonHas");
        QTest::newRow("5 consecutive reverts")
            << QByteArray("{}") << QList<double> { 120, 101, 99.5, 130, 100 } << qQNaN() << 0
            << QStringLiteral("5 consecutive reverts");
        QTest::newRow("roof_pct") << QByteArray("{}") << QList<double> { 120, 90 } << 92.5 << 0
                                  << QStringLiteral("of roof >= 90%");
        QTest::newRow("speedup_over_baseline") << QByteArray("{}") << QList<double> { 70, 45 } << qQNaN() << 0
                                               << QStringLiteral("2.22x over baseline >= 2x");
        QTest::newRow("hours_per_kernel")
            << QByteArray(R"({"move_on": {"hours_per_kernel": 0.0002}})") << QList<double> { 120 } << qQNaN()
            << 800 << QStringLiteral("h on this kernel >= 0.0002 h");
    }
    void moveOnRulesFireAndTheLoopMovesOn()
    {
        QFETCH(QByteArray, runJson);
        QFETCH(QList<double>, latencies);
        QFETCH(double, pctPeak);
        QFETCH(int, agentSleepMs);
        QFETCH(QString, reasonHas);
        CREATE_RIG(r, json::parse(runJson.toStdString()));
        r.agent.sleepMs = agentSleepMs;
        STEP(r); // A's baseline: 100 us
        for (int i = 0; i < latencies.size(); ++i) {
            r.bench.results.enqueue(ok(latencies[i], 0.2, pctPeak));
            STEP(r);
            QCOMPARE(r.agent.contexts.last().kernelName, kA); // no rule fired before the last experiment
            QCOMPARE(r.kernel(kA).state, KernelState::Active);
        }
        QCOMPARE(r.experimentsOn(kA), int(latencies.size()));
        r.agent.sleepMs = 0;
        const int agentCalls = int(r.agent.contexts.size());
        STEP(r); // the boundary: A is retired, B (next in order) gets its baseline measured
        QCOMPARE(r.kernel(kA).state, KernelState::Done);
        QVERIFY2(r.kernel(kA).stateReason.contains(reasonHas), qPrintable(r.kernel(kA).stateReason));
        QVERIFY2(r.messages.join(QLatin1Char('\n')).contains(QStringLiteral("moving on (")),
            qPrintable(r.messages.join(QLatin1Char('\n'))));
        QCOMPARE(r.lastBenchKernel(), kB);
        QCOMPARE(int(r.agent.contexts.size()), agentCalls);
        STEP(r);
        QCOMPARE(r.agent.contexts.last().kernelName, kB);
        QCOMPARE(r.experimentsOn(kA), int(latencies.size())); // A is never touched again
        QCOMPARE(r.kernel(kB).state, KernelState::Active);
        QCOMPARE(r.kernel(kC).state, KernelState::Waiting);
    }

    void pinAndSkipTakeEffectAtTheNextBoundary()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        // Queued while an experiment on A is in flight (the agent is proposing).
        r.agent.enqueue([&r](const AgentContext &) {
            r.queue({ { "action", "pin" }, { "kernel", kA.toStdString() }, { "reason", "good enough" } });
            return proposal(variant(128));
        });
        r.bench.results.enqueue(ok(80));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept); // the experiment in flight finishes normally
        QCOMPARE(r.kernel(kA).state, KernelState::Active); // not applied yet
        QCOMPARE(QDir(RequestQueue::dir(r.dir)).entryList(QDir::Files).size(), 1);
        STEP(r); // boundary: pinned; the loop moves to B
        QCOMPARE(r.kernel(kA).state, KernelState::Pinned);
        QCOMPARE(r.kernel(kA).stateReason, QStringLiteral("good enough"));
        QCOMPARE(QDir(RequestQueue::dir(r.dir)).entryList(QDir::Files).size(), 0);
        QCOMPARE(r.lastBenchKernel(), kB);
        // Skip B from inside one of its experiments; the loop moves on to C.
        r.agent.enqueue([&r](const AgentContext &) {
            r.queue({ { "action", "skip" }, { "kernel", kB.toStdString() } });
            return proposal(variant(256));
        });
        STEP(r);
        QCOMPARE(r.kernel(kB).state, KernelState::Active);
        STEP(r);
        QCOMPARE(r.kernel(kB).state, KernelState::Skipped);
        QCOMPARE(r.lastBenchKernel(), kC);
        for (int i = 0; i < 4; ++i)
            STEP(r);
        for (const AgentContext &c : r.agent.contexts.mid(2))
            QCOMPARE(c.kernelName, kC);
        QCOMPARE(r.experimentsOn(kA), 1);
        QCOMPARE(r.experimentsOn(kB), 1);
        QCOMPARE(r.head(kA), variant(128)); // the pinned best stays
    }

    void revertTakesEffectAtTheNextBoundary()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        r.agent.enqueue(proposal(variant(128)));
        r.bench.results.enqueue(ok(80));
        STEP(r);
        const int x = r.last().id;
        r.agent.enqueue(proposal(variant(256)));
        r.bench.results.enqueue(ok(60));
        STEP(r);
        QCOMPARE(r.head(kA), variant(256));
        r.agent.enqueue([&r, x](const AgentContext &) {
            r.queue({ { "action", "revert" }, { "kernel", kA.toStdString() }, { "experiment", x } });
            return proposal(variant(512));
        });
        r.bench.results.enqueue(ok(70));
        STEP(r);
        QCOMPARE(r.last().status,
            ExperimentStatus::Reverted); // judged against 60 us: the revert is not applied yet
        QCOMPARE(r.head(kA), variant(256));
        const int before = r.last().id;
        r.bench.results.enqueue(ok(75));
        STEP(r); // boundary: the revert is applied, then the agent proposes on top of it
        const Experiment *revert = r.state().experiment(before + 1);
        QVERIFY(revert);
        QCOMPARE(revert->agent, QStringLiteral("user"));
        QCOMPARE(revert->status, ExperimentStatus::Kept);
        QCOMPARE(revert->metrics.latencyUs, 80.0);
        QCOMPARE(r.blobOf(revert->id), variant(128));
        QCOMPARE(r.agent.contexts.last().kernelPy.toUtf8(), variant(128));
        QCOMPARE(r.agent.contexts.last().best.latencyUs, 80.0);
        QCOMPARE(r.last().id, before + 2);
        QCOMPARE(r.last().status, ExperimentStatus::Kept); // 75 us beats the restored 80 us
        QCOMPARE(r.last().parent, revert->commit);
    }

    void reviewModeGivesPending()
    {
        CREATE_RIG(
            r, json({ { "settings", { { "review_mode", true } } }, { "move_on", kNoRules["move_on"] } }));
        QVERIFY(r.state().reviewMode);
        STEP(r);
        const QString baseCommit = r.kernel(kA).head;
        r.agent.enqueue(proposal(variant(128)));
        r.bench.results.enqueue(ok(80));
        STEP(r);
        const int pending = r.last().id;
        QCOMPARE(r.last().status, ExperimentStatus::Pending);
        QCOMPARE(r.kernel(kA).head, baseCommit); // waits for a person
        QCOMPARE(r.workingTree(kA), starter());
        r.agent.enqueue([&r, pending](const AgentContext &ctx) {
            r.queue({ { "action", "accept" }, { "experiment", pending } });
            return proposal(
                ctx.kernelPy == QString::fromUtf8(starter()) ? variant(256) : QByteArray("unexpected"));
        });
        r.bench.results.enqueue(ok(90));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Pending); // 90 beats the baseline's 100: pending too
        STEP(r); // boundary: accepted
        QCOMPARE(r.experiment(pending).status, ExperimentStatus::Kept);
        QCOMPARE(r.kernel(kA).head, r.experiment(pending).commit);
        QCOMPARE(r.workingTree(kA), variant(128));
        QCOMPARE(r.agent.contexts.last().kernelPy.toUtf8(), variant(128));
    }

    void failedBaselineSkipsTheKernel()
    {
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(
            bad(BenchStatus::Incorrect, QStringLiteral("smoke: normal 64x128: NaN in output")));
        STEP(r);
        const Experiment *base = Orchestrator::baseline(r.state(), kA);
        QCOMPARE(base->failure, QStringLiteral("smoke: normal 64x128: NaN in output"));
        QCOMPARE(r.kernel(kA).state, KernelState::Skipped);
        QVERIFY2(r.kernel(kA).stateReason.contains(QStringLiteral("baseline fails the harness")),
            qPrintable(r.kernel(kA).stateReason));
        QVERIFY(!r.session->failed());
        STEP(r);
        QCOMPARE(r.lastBenchKernel(), kB);
        STEP(r);
        QCOMPARE(r.agent.contexts.size(), 1);
        QCOMPARE(r.agent.contexts[0].kernelName, kB);
        QCOMPARE(r.experimentsOn(kA), 0);
    }

    // Pinned while the agent was proposing (another device's loop applied the request): the proposal
    // is dropped, which is no failure, and the loop goes on with the next kernel.
    void pinnedWhileProposingIsDropped()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        r.agent.enqueue([&r](const AgentContext &) {
            r.store().pin(kA, QStringLiteral("pinned elsewhere"));
            return proposal(variant(128));
        });
        STEP(r);
        QVERIFY(!r.session->failed());
        QCOMPARE(r.experimentsOn(kA), 0);
        QCOMPARE(r.bench.requests.size(), 1);
        QVERIFY(r.messages.last().contains(QStringLiteral("proposal dropped")));
        STEP(r);
        QCOMPARE(r.lastBenchKernel(), kB);
    }

    void resumedLoopContinuesOnTheSameKernel()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        r.agent.enqueue(proposal(variant(128)));
        r.bench.results << ok(80);
        STEP(r);
        r.bench.results << ok(90);
        STEP(r);
        r.bench.results << bad(BenchStatus::Incorrect, QStringLiteral("sizes: wrong"));
        STEP(r);
        QVector<int> ids;
        for (const Experiment &e : r.state().experiments)
            if (e.kernel == kA)
                ids << e.id;
        const int lastId = r.last().id;
        const QVector<Experiment> before = r.state().experiments;

        QVERIFY2(r.reopen(), qPrintable(r.error)); // a new store, session and loop on the same directory
        r.agent.contexts.clear();
        r.bench.results << ok(70);
        STEP(r);
        QCOMPARE(r.agent.contexts.size(), 1);
        const AgentContext &ctx = r.agent.contexts[0];
        QCOMPARE(ctx.kernelName, kA);
        QCOMPARE(ctx.kernelPy.toUtf8(), variant(128));
        QCOMPARE(ctx.best.latencyUs, 80.0);
        QVector<int> seen;
        for (const Experiment &e : ctx.history)
            seen << e.id;
        QCOMPARE(seen, ids);
        for (int id : ids) // what each experiment proposed, read back from its commit
            QVERIFY2(ctx.historyKernelPy.contains(id), qPrintable(QString::number(id)));
        QCOMPARE(ctx.historyKernelPy.value(ids[1]).toUtf8(), variant(128));
        QCOMPARE(r.last().id, lastId + 1);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        for (const Experiment &e : before) { // the history is intact
            QCOMPARE(r.experiment(e.id).status, e.status);
            QCOMPARE(r.experiment(e.id).commit, e.commit);
        }
    }

    // A run killed mid-experiment and resumed later: the repair finishes the interrupted experiment
    // at the resume, and the time in between is not work on the kernel (hours_per_kernel).
    void downtimeAfterACrashIsNotWorkingTime()
    {
        CREATE_RIG(r, json::parse(R"({"move_on": {"hours_per_kernel": 0.0003}})")); // 1.08 s
        STEP(r);
        Experiment draft;
        draft.agent = QStringLiteral("fake");
        draft.agentSeconds = 0.1;
        const Experiment running = r.store().beginExperiment(kA, variant(128), draft, &r.error);
        QVERIFY2(running.id != 0, qPrintable(r.error));
        r.loop.reset();
        r.session.reset(); // "killed": the experiment is left running
        QThread::msleep(1300);
        QVERIFY2(r.reopen(), qPrintable(r.error));
        QCOMPARE(r.experiment(running.id).status, ExperimentStatus::Crashed);
        QVERIFY(r.experiment(running.id).started.msecsTo(r.experiment(running.id).finished) >= 1300);
        STEP(r);
        QCOMPARE(r.kernel(kA).state, KernelState::Active); // not retired by the downtime
        QCOMPARE(r.agent.contexts.last().kernelName, kA);
    }

    void budgetAndNothingLeft()
    {
        CREATE_RIG(r, kNoRules);
        r.session->setBudget(0, 2);
        QCOMPARE(r.loop->run(), ExperimentLoop::Step::Stopped);
        QCOMPARE(r.session->stats().experiments, 2);
        QCOMPARE(r.session->endReason(), QStringLiteral("2 experiments done"));

        CREATE_RIG(s, kNoRules);
        for (int i = 0; i < 3; ++i)
            s.agent.enqueue(agentError(AgentError::Kind::Exhausted, QStringLiteral("nothing")));
        QCOMPARE(s.loop->run(), ExperimentLoop::Step::NothingLeft);
        for (const QString &k : { kA, kB, kC })
            QCOMPARE(s.kernel(k).state, KernelState::Done);
        QVERIFY(s.session->lock().claimed().isEmpty());
    }
};

AK_TEST_CLASS(ExperimentLoopSteeringTest)
#include "tst_experimentloopsteering.moc"
