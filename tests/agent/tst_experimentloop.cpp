// The real ExperimentLoop over a real RunStore: what one experiment records (baseline, keep,
// revert, harness and static-check failures, agent errors, environment trouble, overhead). The rig
// (scripted agent and benchmark) is in experimentlooprig.h; steering, move-on rules and resuming are
// in tst_experimentloopsteering.cpp.
#include "experimentlooprig.h"

#include "agents/tunememory.h"
#include "loop/orchestrator.h"
#include "loop/slurmallocation.h"
#include "runloader.h"
#include "testregistry.h"
#include <thread>

#include <thread>

using namespace ak;
using namespace ak::test;

class ExperimentLoopTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(starter().contains("ROW_CHUNK = 64\n") && starter().contains("TEST_SIZES"),
            "the CPU softmax starter changed");
    }

    void baselineIsMeasuredFirst()
    {
        CREATE_RIG(r, kNoRules);
        BenchResult measured = ok(100, 0.5);
        measured.seconds = 4.25;
        r.bench.results.enqueue(measured);
        STEP(r);
        QCOMPARE(r.agent.contexts.size(), 0); // no agent before the baseline
        QCOMPARE(r.bench.requests.size(), 1);
        QCOMPARE(r.bench.seen[0], starter());
        QCOMPARE(r.lastBenchKernel(), kA); // first in Amdahl order
        QCOMPARE(r.bench.requests[0].device, QStringLiteral("cpu"));
        QVERIFY(r.bench.requests[0].quick);
        const Experiment *base = Orchestrator::baseline(r.state(), kA);
        QVERIFY(base);
        QCOMPARE(base->status, ExperimentStatus::Baseline);
        QCOMPARE(base->metrics.latencyUs, 100.0);
        QCOMPARE(base->metrics.noisePct, 0.5);
        // The bench's own time: the baseline began when its kernel was added, long before its bench
        // (on the H200, 97 s of waiting were once counted toward the kernel's time limit).
        QCOMPARE(base->benchSeconds, 4.25);
        QVERIFY(base->failure.isEmpty());
        const int baseId = base->id; // `base` points into the writer's state, which the next step replaces
        QVERIFY(!Orchestrator::needsBaseline(r.state(), kA));
        QVERIFY(Orchestrator::needsBaseline(r.state(), kB)); // only the kernel being worked on
        QCOMPARE(r.session->stats().experiments, 0); // a baseline is not an experiment
        // Recorded on disk, not only in memory.
        const RunSnapshotPtr loaded = RunLoader::load(r.dir);
        QCOMPARE(Orchestrator::baseline(*loaded, kA)->metrics.latencyUs, 100.0);
        QVERIFY(readFile(r.dir + QStringLiteral("/results.tsv")).contains("100"));

        // The next step asks the agent, with the measured baseline as its standing.
        r.bench.results.enqueue(ok(150));
        STEP(r);
        QCOMPARE(r.agent.contexts.size(), 1);
        const AgentContext &ctx = r.agent.contexts[0];
        QCOMPARE(ctx.kernelName, kA);
        QCOMPARE(ctx.opType, QStringLiteral("softmax"));
        QCOMPARE(ctx.kernelPy.toUtf8(), starter());
        QVERIFY(ctx.staticInfo.ok);
        QCOMPARE(ctx.best.latencyUs, 100.0);
        QCOMPARE(ctx.history.size(), 1);
        QCOMPARE(ctx.historyKernelPy.value(baseId).toUtf8(), starter());
        QVERIFY(!ctx.systemPrompt.isEmpty());
        QVERIFY(ctx.kernelDir.endsWith(QStringLiteral("kernels/") + kA));
        QCOMPARE(r.bench.requests.size(), 2);
    }

    void fasterIsKeptAndMovesTheHead()
    {
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(ok(100, 0.5));
        STEP(r);
        const QString baseCommit = r.kernel(kA).head;
        r.agent.enqueue(proposal(variant(128), QStringLiteral("ROW_CHUNK 64 -> 128")));
        r.bench.results.enqueue(ok(80, 0.5));
        STEP(r);
        const Experiment e = r.last();
        QCOMPARE(e.status, ExperimentStatus::Kept);
        QCOMPARE(e.kernel, kA);
        QCOMPARE(e.agent, QStringLiteral("fake"));
        QCOMPARE(e.description, QStringLiteral("ROW_CHUNK 64 -> 128"));
        QCOMPARE(e.metrics.latencyUs, 80.0);
        QVERIFY(e.failure.isEmpty());
        QCOMPARE(e.parent, baseCommit);
        QCOMPARE(e.tokensIn, 1000);
        QCOMPARE(e.tokensOut, 300);
        QCOMPARE(e.cost, 0.25);
        QCOMPARE(r.kernel(kA).headExperiment, e.id);
        QCOMPARE(r.kernel(kA).head, e.commit);
        QCOMPARE(r.head(kA), variant(128));
        QCOMPARE(r.workingTree(kA), variant(128));
        QCOMPARE(r.store().repo().resolveRef(QStringLiteral("refs/heads/kernels/") + kA), e.commit);
        QCOMPARE(r.store().repo().resolveRef(QStringLiteral("refs/experiments/%1").arg(e.id)), e.commit);
        QCOMPARE(r.store().repo().blobIdAt(r.store().bestCommit(), RunStore::kernelPath(kA)),
            r.store().repo().blobIdAt(e.commit, RunStore::kernelPath(kA)));
        QVERIFY(r.store().repo().messageOf(e.commit).contains(QStringLiteral("Outcome: keep")));
        QCOMPARE(r.session->stats().experiments, 1);
        QCOMPARE(r.session->stats().kept, 1);
        QVERIFY(r.messages.last().contains(QStringLiteral("keep")));

        // The next proposal starts from the new head and is judged against it.
        r.bench.results.enqueue(ok(79.5, 0.1)); // faster than the baseline, not > 1% faster than the head
        STEP(r);
        QCOMPARE(r.agent.contexts.last().kernelPy.toUtf8(), variant(128));
        QCOMPARE(r.agent.contexts.last().best.latencyUs, 80.0);
        QCOMPARE(r.last().status, ExperimentStatus::Reverted);
        QCOMPARE(r.head(kA), variant(128));
    }

    void peersCarryWhatWorkedOnTheSameOpType()
    {
        // A (softmax) keeps ROW_CHUNK 128; once the loop is on B, another softmax, B's context names A
        // with its head kernel.py and speedup: the tune agent tries that first (tst_tuneagent).
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(ok(100, 0.5));
        STEP(r);
        r.agent.enqueue(proposal(variant(128), QStringLiteral("ROW_CHUNK 64 -> 128")));
        r.bench.results.enqueue(ok(80, 0.5));
        STEP(r);
        QVERIFY(r.agent.contexts.last().peers.isEmpty()); // B and C have kept nothing
        QVERIFY(r.store().skip(kA, QStringLiteral("test: on to B")));
        r.bench.results.enqueue(ok(100, 0.5)); // B's baseline
        STEP(r);
        r.agent.enqueue(proposal(variant(256), QStringLiteral("ROW_CHUNK 64 -> 256")));
        r.bench.results.enqueue(ok(90, 0.5));
        STEP(r);
        const AgentContext &ctx = r.agent.contexts.last();
        QCOMPARE(ctx.kernelName, kB);
        QCOMPARE(ctx.peers.size(), 1);
        QCOMPARE(ctx.peers[0].kernel, kA);
        QCOMPARE(ctx.peers[0].kernelPy.toUtf8(), variant(128));
        QCOMPARE(ctx.peers[0].speedup, 50.0 / 80.0);
    }

    void keepsAreRememberedForTheNextRun()
    {
        // Each keep's tunable constants go to the tune memory (a temporary file here; the suite runs
        // with the memory off), for the next run on this device.
        QTemporaryDir tmp;
        const QByteArray before = qgetenv("AUTOKERNEL_TUNE_MEMORY");
        qputenv("AUTOKERNEL_TUNE_MEMORY", tmp.filePath(QStringLiteral("memory.json")).toUtf8());
        {
            CREATE_RIG(r, kNoRules);
            r.bench.results.enqueue(ok(100, 0.5));
            STEP(r);
            r.agent.enqueue(proposal(variant(128), QStringLiteral("ROW_CHUNK 64 -> 128")));
            r.bench.results.enqueue(ok(80, 0.5));
            STEP(r);
            r.agent.enqueue(proposal(variant(256), QStringLiteral("ROW_CHUNK 128 -> 256")));
            r.bench.results.enqueue(ok(95, 0.5)); // reverted: not remembered
            STEP(r);
        }
        const QVector<TuneMemory::Entry> all = TuneMemory::all();
        qputenv("AUTOKERNEL_TUNE_MEMORY", before);
        QCOMPARE(all.size(), 1);
        QCOMPARE(all[0].opType, QStringLiteral("softmax"));
        QCOMPARE(all[0].config.value(QStringLiteral("ROW_CHUNK")), 128.0);
        QCOMPARE(all[0].speedup, 50.0 / 80.0);
    }

    void withinNoiseIsReverted()
    {
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(ok(100, 0.2));
        STEP(r);
        const QString baseCommit = r.kernel(kA).head;

        r.bench.results.enqueue(ok(99.5, 0.2)); // 0.5% faster: under the 1% floor
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Reverted);
        QVERIFY2(r.last().failure.contains(QStringLiteral("0.5% faster")), qPrintable(r.last().failure));
        QVERIFY2(r.last().failure.contains(QStringLiteral("> 1% faster")), qPrintable(r.last().failure));
        QCOMPARE(r.last().metrics.latencyUs, 99.5); // measured numbers are kept with the verdict
        const int first = r.last().id;

        r.bench.results.enqueue(ok(96, 6.0)); // 4% faster, but the run-to-run noise is 6%
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Reverted);
        QVERIFY2(r.last().failure.contains(QStringLiteral("noise 6.0%")), qPrintable(r.last().failure));

        r.bench.results.enqueue(ok(130)); // slower
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Reverted);
        QVERIFY2(r.last().failure.contains(QStringLiteral("slower")), qPrintable(r.last().failure));

        QCOMPARE(r.kernel(kA).head, baseCommit);
        QCOMPARE(r.head(kA), starter());
        QCOMPARE(r.workingTree(kA), starter());
        // Each attempt stays reachable with its own kernel.py and outcome.
        QCOMPARE(r.blobOf(first), variant(1000));
        QVERIFY(r.store()
                    .repo()
                    .messageOf(r.experiment(first).commit)
                    .contains(QStringLiteral("Outcome: revert")));
        QCOMPARE(r.session->stats().kept, 0);
        QCOMPARE(r.session->stats().experiments, 3);
    }

    void harnessFailuresAreRecorded()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        const QString baseCommit = r.kernel(kA).head;
        r.bench.results.enqueue(bad(BenchStatus::Incorrect,
            QStringLiteral("smoke: normal 64x128 float32: max abs error 3.2 at [0, 5]")));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Failed);
        QCOMPARE(
            r.last().failure, QStringLiteral("smoke: normal 64x128 float32: max abs error 3.2 at [0, 5]"));
        QVERIFY(!Metrics::has(r.last().metrics.latencyUs));

        BenchResult raised = bad(BenchStatus::Error, QStringLiteral("import: kernel raised"));
        raised.traceback = QStringLiteral("Traceback (most recent call last):\n  File \"kernel.py\", line "
                                          "3\nNameError: name 'y' is not defined\n");
        r.bench.results.enqueue(raised);
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Failed);
        QVERIFY2(r.last().failure.contains(QStringLiteral("NameError: name 'y' is not defined")),
            qPrintable(r.last().failure));

        r.bench.results.enqueue(bad(BenchStatus::Timeout, QStringLiteral("no answer within 180 s")));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Timeout);
        QCOMPARE(r.last().failure, QStringLiteral("no answer within 180 s"));

        r.bench.results.enqueue(bad(BenchStatus::Crash, QString()));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Crashed);
        QCOMPARE(r.last().failure, QStringLiteral("crash")); // no text from the harness: the status names it

        QCOMPARE(r.kernel(kA).head, baseCommit);
        QCOMPARE(r.session->stats().failed, 4);
        QVERIFY(!r.session->failed()); // the kernel's fault, not the environment's
        r.bench.results.enqueue(ok(50));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
    }

    void staticCheckRejectsWithoutBenchmarking_data()
    {
        QTest::addColumn<QByteArray>("proposed");
        QTest::addColumn<QString>("reasonHas");
        QByteArray noFn = variant(128);
        noFn.replace("def kernel_fn(x):", "def kernel_impl(x):");
        QByteArray type = variant(128);
        type.replace("KERNEL_TYPE = \"softmax\"", "KERNEL_TYPE = \"gelu\"");
        QByteArray sizes = variant(128);
        sizes.replace("{\"rows\": 64, \"cols\": 128}", "{\"rows\": 8, \"cols\": 8}");
        QByteArray noSizes = variant(128);
        noSizes.replace("TEST_SIZES = [{\"rows\": 64, \"cols\": 128}]\n", "");
        QByteArray signature = variant(128);
        signature.replace("def kernel_fn(x):", "def kernel_fn(x, dim=-1):");
        QTest::newRow("deletes kernel_fn") << noFn << QStringLiteral("kernel_fn");
        QTest::newRow("changes KERNEL_TYPE") << type << QStringLiteral("KERNEL_TYPE changed");
        QTest::newRow("changes TEST_SIZES") << sizes << QStringLiteral("TEST_SIZES");
        QTest::newRow("drops TEST_SIZES") << noSizes << QStringLiteral("TEST_SIZES");
        QTest::newRow("changes the signature") << signature << QStringLiteral("parameters");
        QTest::newRow("syntax error")
            << QByteArray(variant(128) + "\ndef broken(:\n") << QStringLiteral("kernel.py");
        QTest::newRow("identical") << starter() << QStringLiteral("identical");
    }
    void staticCheckRejectsWithoutBenchmarking()
    {
        QFETCH(QByteArray, proposed);
        QFETCH(QString, reasonHas);
        CREATE_RIG(r, kNoRules);
        STEP(r);
        const QString baseCommit = r.kernel(kA).head;
        r.agent.enqueue(proposal(proposed, QStringLiteral("a bad idea")));
        STEP(r);
        const Experiment e = r.last();
        QCOMPARE(e.status, ExperimentStatus::Failed);
        QVERIFY2(e.failure.startsWith(QStringLiteral("static check: ")), qPrintable(e.failure));
        QVERIFY2(e.failure.contains(reasonHas), qPrintable(e.failure));
        QCOMPARE(e.description, QStringLiteral("a bad idea"));
        QCOMPARE(r.bench.requests.size(), 1); // the baseline only: the harness never saw it
        QVERIFY(proposed == starter() || !r.bench.measured(proposed));
        // The attempt is still a commit on top of the head, under refs/experiments/<id>.
        QCOMPARE(r.store().repo().resolveRef(QStringLiteral("refs/experiments/%1").arg(e.id)), e.commit);
        QCOMPARE(r.store().repo().parentsOf(e.commit), QStringList { baseCommit });
        QCOMPARE(r.blobOf(e.id), proposed);
        QVERIFY(r.store().repo().messageOf(e.commit).contains(QStringLiteral("Outcome: fail")));
        QCOMPARE(r.kernel(kA).head, baseCommit);
        QCOMPARE(r.workingTree(kA), starter());
        QCOMPARE(r.session->stats().failed, 1);
        QVERIFY(r.loop->lastOverheadMs() > 0);
    }

    void agentErrorsAreFailedExperimentsAndTheLoopGoesOn()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        r.agent.enqueue(
            agentError(AgentError::Kind::BadReply, QStringLiteral("unusable reply: no ```python block")));
        STEP(r);
        Experiment e = r.last();
        QCOMPARE(e.status, ExperimentStatus::Failed);
        QCOMPARE(e.agent, QStringLiteral("fake"));
        QCOMPARE(e.description, QStringLiteral("agent error (bad-reply)"));
        QCOMPARE(e.failure, QStringLiteral("unusable reply: no ```python block"));
        QCOMPARE(e.tokensIn, 120); // a bad reply still cost tokens
        QCOMPARE(e.tokensOut, 45);
        QVERIFY(e.agentSeconds > 0);
        QCOMPARE(r.blobOf(e.id), starter()); // nothing proposed: the unchanged file
        QCOMPARE(r.bench.requests.size(), 1);
        // The garbage reply is kept beside the failed experiment, for review.
        QCOMPARE(RunStore::readReply(r.dir, e.id), QByteArray("I'm sorry, I can't help with that."));

        r.agent.enqueue(agentError(AgentError::Kind::Network, QStringLiteral("connection refused")));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Failed);
        QCOMPARE(r.last().description, QStringLiteral("agent error (network)"));

        // The loop goes on: the next proposal is measured and kept, its reply beside it.
        AgentProposal answered;
        answered.kernelPy = QString::fromUtf8(variant(32));
        answered.description = QStringLiteral("smaller row chunks");
        answered.rawReply = QStringLiteral("Smaller row chunks.\n```python\n...\n```");
        r.agent.enqueue(AgentResult::success(answered));
        r.bench.results.enqueue(ok(70));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        QCOMPARE(
            RunStore::readReply(r.dir, r.last().id), QByteArray("Smaller row chunks.\n```python\n...\n```"));
        QCOMPARE(r.bench.requests.size(), 2);
        QCOMPARE(r.agent.contexts.size(), 3);
        QCOMPARE(r.agent.contexts.last().history.size(), 3); // baseline + the two failures
        QCOMPARE(r.session->stats().experiments, 3);
        QCOMPARE(r.session->stats().failed, 2);
    }

    // An unreachable agent is not the kernel's failure: its outages do not count toward the
    // reverts rule, and three in a row pause the loop (for 1 s here, doubling per trip) instead of
    // burning through every kernel; after the pause the next outage trips it again at once.
    void agentOutagesPauseTheLoopAndRetireNothing()
    {
        const json twoReverts = { { "move_on",
            { { "max_consecutive_reverts", 2 }, { "roof_pct", 0 }, { "hours_per_kernel", 0 },
                { "speedup_over_baseline", 0 } } } };
        CREATE_RIG(r, twoReverts);
        QStringList pauses;
        r.session->onSelfPause = [&pauses](const QString &why) { pauses << why; };
        STEP(r); // A's baseline
        for (int i = 0; i < 3; ++i) {
            QVERIFY(!r.session->paused());
            r.agent.enqueue(agentError(AgentError::Kind::Network, QStringLiteral("connection refused")));
            STEP(r);
        }
        QVERIFY(r.session->paused());
        QCOMPARE(pauses.size(), 1);
        QVERIFY2(pauses.first().contains(QStringLiteral("failed 3 times in a row (connection refused)")),
            qPrintable(pauses.first()));
        QCOMPARE(r.experimentsOn(kA), 3); // recorded, on A, which the two-reverts rule did not retire
        QVERIFY(r.kernel(kA).state != KernelState::Done);

        // The pause ends by itself; the probe fails too: paused again, for twice as long.
        QElapsedTimer waited;
        waited.start();
        r.agent.enqueue(agentError(AgentError::Kind::Timeout, QStringLiteral("no answer in 600 s")));
        STEP(r);
        QVERIFY2(waited.elapsed() >= 900, qPrintable(QString::number(waited.elapsed())));
        QCOMPARE(pauses.size(), 3);
        QVERIFY(pauses.at(1).isEmpty()); // the first pause's end
        QVERIFY2(pauses.at(2).contains(QStringLiteral("pauses for 2 s")), qPrintable(pauses.at(2)));
        QVERIFY(r.session->paused());

        // A person resumes now; a usable answer closes the breaker.
        r.session->setPaused(false);
        waited.restart();
        r.bench.results.enqueue(ok(70));
        STEP(r);
        QVERIFY(waited.elapsed() < 900);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        QCOMPARE(r.last().kernel, kA);
        r.agent.enqueue(agentError(AgentError::Kind::Http, QStringLiteral("HTTP 503")));
        STEP(r);
        QVERIFY(!r.session->paused()); // one outage after an answer is not three in a row
        QCOMPARE(pauses.size(), 3);
    }

    void cancelledAndConfigErrors()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        const int count = int(r.state().experiments.size());
        r.agent.enqueue(agentError(AgentError::Kind::Cancelled, QStringLiteral("stopped by request")));
        QCOMPARE(r.step(), ExperimentLoop::Step::Stopped);
        QCOMPARE(int(r.state().experiments.size()), count); // a person's stop is not an experiment
        QVERIFY(!r.session->failed());

        // A configuration error pauses until a person resumes: no experiment, no failure, no stop.
        QStringList pauses;
        r.session->onSelfPause = [&pauses](const QString &why) { pauses << why; };
        r.agent.enqueue(
            agentError(AgentError::Kind::Config, QStringLiteral("no API key in $OPENAI_API_KEY")));
        QCOMPARE(r.step(), ExperimentLoop::Step::Reconfigure);
        QCOMPARE(int(r.state().experiments.size()), count);
        QVERIFY(!r.session->failed());
        QVERIFY(!r.session->stopRequested());
        QVERIFY(r.session->paused());
        QVERIFY(r.session->pausedUntilResumed());
        QCOMPARE(pauses.size(), 1);
        QVERIFY2(pauses.first().contains(QStringLiteral("no API key in $OPENAI_API_KEY")),
            qPrintable(pauses.first()));
        QVERIFY(r.kernel(kA).state != KernelState::Done);
        QCOMPARE(r.agent.contexts.size(), 2);
        // A stop during that pause ends the loop without another request.
        r.session->requestStop();
        QCOMPARE(r.step(), ExperimentLoop::Step::Stopped);
        QCOMPARE(r.agent.contexts.size(), 2);
    }

    void environmentErrorsStopTheLoop()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        const QString harness = QStringLiteral("worker: cannot start /usr/bin/python3");
        // Two in a row, then a result from the kernel: the count starts again.
        r.bench.results << bad(BenchStatus::Error, harness, true) << bad(BenchStatus::Error, harness, true)
                        << ok(120);
        STEP(r);
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Failed);
        QVERIFY2(r.last().failure.startsWith(QStringLiteral("harness problem (not the kernel): ")),
            qPrintable(r.last().failure));
        STEP(r);
        QVERIFY(!r.session->failed());
        r.bench.results << bad(BenchStatus::Error, harness, true) << bad(BenchStatus::Error, harness, true)
                        << bad(BenchStatus::Error, harness, true);
        STEP(r);
        STEP(r);
        QVERIFY(!r.session->stopRequested());
        STEP(r); // the third in a row
        QVERIFY(r.session->failed());
        QVERIFY(r.session->stopRequested());
        QVERIFY2(r.session->endReason().contains(QStringLiteral("3 times in a row")),
            qPrintable(r.session->endReason()));
        QCOMPARE(r.last().status, ExperimentStatus::Failed); // recorded before stopping
        const int benches = int(r.bench.requests.size());
        QCOMPARE(r.step(), ExperimentLoop::Step::Stopped);
        QCOMPARE(r.loop->run(), ExperimentLoop::Step::Stopped);
        QCOMPARE(int(r.bench.requests.size()), benches);
    }

    void environmentErrorOnTheBaselineStops()
    {
        CREATE_RIG(r, kNoRules);
        r.bench.results << bad(BenchStatus::Error, QStringLiteral("No module named 'torch'"), true);
        QCOMPARE(r.step(), ExperimentLoop::Step::Stopped);
        QVERIFY(r.session->failed());
        QVERIFY(r.session->endReason().contains(QStringLiteral("No module named 'torch'")));
        QVERIFY(Orchestrator::needsBaseline(r.state(), kA)); // not recorded as the kernel's fault
        QCOMPARE(r.kernel(kA).state, KernelState::Waiting);
    }

    // A remote worker's harness problem pauses the loop (the host may come back), but an ended Slurm
    // allocation never does: srun --jobid=N would refuse at every retry, so the loop stops, naming it.
    void endedSlurmAllocationStopsTheLoop()
    {
        CREATE_RIG(r, kNoRules);
        ExperimentLoopConfig cfg;
        cfg.label = QStringLiteral("test");
        cfg.quickBench = true;
        cfg.remoteWorker = true;
        r.loop = std::make_unique<ExperimentLoop>(
            r.session.get(), &r.agent, [&r](const BenchRequest &q) { return r.bench.run(q); }, cfg);
        const QString start = QStringLiteral(
            "the worker exited during start-up (the Slurm step ended with code 1 (cancelled, preempted "
            "or out of time?)): srun: error: ");
        // The controller out of reach for now: a pause, not an end.
        r.bench.results << bad(BenchStatus::Error,
            start
                + QStringLiteral(
                    "Unable to confirm allocation for job 77: Unable to contact slurm controller"),
            true);
        STEP(r);
        QVERIFY(r.session->paused());
        QVERIFY(!r.session->stopRequested());
        r.session->setPaused(false); // Resume: tries again at once
        r.bench.results << bad(BenchStatus::Error, start + QStringLiteral("Slurm job 77 has expired"), true);
        STEP(r); // the baseline step itself; the loop ends before the next one
        QVERIFY(r.session->stopRequested());
        QVERIFY(r.session->failed());
        QVERIFY2(r.session->endReason().startsWith(QStringLiteral("the Slurm allocation 77 ended")),
            qPrintable(r.session->endReason()));
        QVERIFY2(r.session->endReason().contains(QStringLiteral("has expired")),
            qPrintable(r.session->endReason()));
        QVERIFY(Orchestrator::needsBaseline(r.state(), kA)); // not the kernel's fault
        const int benches = int(r.bench.requests.size());
        QCOMPARE(r.step(), ExperimentLoop::Step::Stopped);
        QCOMPARE(int(r.bench.requests.size()), benches);
    }

    void slurmEndedJobWords_data()
    {
        QTest::addColumn<QString>("srun");
        QTest::addColumn<qint64>("job");
        QTest::newRow("expired") << QStringLiteral("srun: error: Slurm job 12 has expired") << qint64(12);
        QTest::newRow("purged") << QStringLiteral(
            "srun: error: Unable to confirm allocation for job 99999: Invalid job id specified")
                                << qint64(99999);
        QTest::newRow("completing") << QStringLiteral("srun: error: Unable to confirm allocation for job 5: "
                                                      "Job/step already completing or completed")
                                    << qint64(5);
        QTest::newRow("controller down") << QStringLiteral(
            "srun: error: Unable to confirm allocation for job 5: Unable to contact slurm controller")
                                         << qint64(0);
        QTest::newRow("step cancelled")
            << QStringLiteral("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
            << qint64(0);
    }
    void slurmEndedJobWords()
    {
        QFETCH(QString, srun);
        QFETCH(qint64, job);
        QString words;
        QCOMPARE(SlurmAllocation::endedJob(srun, &words), job);
        QCOMPARE(words.isEmpty(), job == 0);
        QVERIFY(srun.endsWith(words));
    }

    // The run cannot be written any more: the loop stops as a failure instead of asking the agent
    // (and paying for it) again and again for nothing recorded.
    void unwritableRunWaitsAndRecovers_data()
    {
        QTest::addColumn<int>("what"); // 0: a proposal, 1: an agent error, 2: the agent is exhausted
        QTest::newRow("proposal") << 0;
        QTest::newRow("agent error") << 1;
        QTest::newRow("exhausted") << 2;
    }
    // A run that cannot be written (a full disk, say) neither ends the loop nor makes it ask the
    // agent in a tight loop: it waits, says why, and goes on once writing works again.
    void unwritableRunWaitsAndRecovers()
    {
        QFETCH(int, what);
        CREATE_RIG(r, kNoRules);
        STEP(r);
        if (what == 1)
            r.agent.enqueue(agentError(AgentError::Kind::BadReply, QStringLiteral("unusable reply")));
        if (what == 2)
            r.agent.enqueue(agentError(AgentError::Kind::Exhausted, QStringLiteral("nothing left")));
        // experiments.jsonl, the commit point of every operation, becomes a folder: appends fail.
        const QString log = r.dir + QStringLiteral("/experiments.jsonl");
        QVERIFY(QFile::rename(log, log + QStringLiteral(".aside")));
        QVERIFY(QDir().mkpath(log));
        const int before = int(r.state().experiments.size());
        STEP(r);
        QVERIFY(!r.session->failed());
        QVERIFY(!r.session->stopRequested());
        QVERIFY2(r.messages.join(QLatin1Char('\n')).contains(QStringLiteral("cannot write the run")),
            qPrintable(r.messages.join(QLatin1Char('\n'))));
        QCOMPARE(int(r.state().experiments.size()), before);
        QCOMPARE(r.agent.contexts.size(), 1);
        // The disk is freed: the next experiment is recorded, and what was there before is intact.
        QVERIFY(QDir(log).removeRecursively());
        QVERIFY(QFile::rename(log + QStringLiteral(".aside"), log));
        if (what == 2)
            r.agent.enqueue(agentError(AgentError::Kind::Exhausted, QStringLiteral("nothing left")));
        STEP(r);
        if (what == 2) {
            QCOMPARE(r.kernel(kA).state, KernelState::Done);
        } else {
            QCOMPARE(int(r.state().experiments.size()), before + 1);
            QVERIFY(r.last().status != ExperimentStatus::Running);
        }
        QVERIFY(RunLoader::load(r.dir)->warnings.isEmpty());
    }

    // A measured result whose record is refused is kept in hand and written when the disk allows.
    void measuredResultIsRecordedOnceWritable()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        const QString log = r.dir + QStringLiteral("/experiments.jsonl");
        std::thread restore;
        r.bench.before = [&] {
            // begin was written; the finish will be refused until the log is back (200 ms later).
            QFile::rename(log, log + QStringLiteral(".aside"));
            QDir().mkpath(log);
            restore = std::thread([log] {
                QThread::msleep(200);
                QDir(log).removeRecursively();
                QFile::rename(log + QStringLiteral(".aside"), log);
            });
        };
        r.bench.results.enqueue(ok(50));
        STEP(r);
        restore.join();
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        QCOMPARE(r.last().metrics.latencyUs, 50.0);
        const RunSnapshotPtr run = RunLoader::load(r.dir);
        QCOMPARE(run->experiments.last().status, ExperimentStatus::Kept);
        QVERIFY(r.messages.join(QLatin1Char('\n')).contains(QStringLiteral("could not be recorded")));
    }

    // A stop during the wait ends it at once.
    void stopEndsTheWait()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        const QString log = r.dir + QStringLiteral("/experiments.jsonl");
        QVERIFY(QFile::rename(log, log + QStringLiteral(".aside")));
        QVERIFY(QDir().mkpath(log));
        r.loop.reset();
        ExperimentLoopConfig cfg;
        cfg.writeRetryMs = 60000;
        r.loop = std::make_unique<ExperimentLoop>(
            r.session.get(), &r.agent, [&r](const BenchRequest &q) { return r.bench.run(q); }, cfg);
        std::thread stopper([&r] {
            QThread::msleep(300);
            r.session->requestStop(QStringLiteral("stopped by the user"));
        });
        QElapsedTimer timer;
        timer.start();
        QCOMPARE(r.step(), ExperimentLoop::Step::Stopped);
        stopper.join();
        QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
        QVERIFY(!r.session->failed());
    }

    void overheadExcludesAgentAndHarness()
    {
        CREATE_RIG(r, kNoRules);
        STEP(r);
        r.agent.sleepMs = 400;
        r.bench.sleepMs = 400;
        QElapsedTimer timer;
        timer.start();
        STEP(r);
        const double wallMs = timer.elapsed();
        const double overhead = r.loop->lastOverheadMs();
        QVERIFY2(overhead > 0, qPrintable(QString::number(overhead)));
        QVERIFY2(
            overhead < wallMs - 790, qPrintable(QStringLiteral("%1 of %2 ms").arg(overhead).arg(wallMs)));
        QCOMPARE(r.session->stats().overheadMsTotal, overhead);
        QVERIFY(r.last().agentSeconds >= 0.4);
        QVERIFY(r.last().benchSeconds >= 0.4);
    }
};

AK_TEST_CLASS(ExperimentLoopTest)
#include "tst_experimentloop.moc"
