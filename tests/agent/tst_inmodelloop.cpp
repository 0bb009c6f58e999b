// #38 item 5 in the loop: a keep is checked inside the model (the worker's `inmodel` op, scripted
// here), the check is recorded in inmodel.json, checks are rationed by their share of the loop's time,
// and a kernel whose harness wins do not show in the model is moved on from (max_in_model_misses).
#include "experimentlooprig.h"
#include "testregistry.h"

#include "runloader.h"

using namespace ak;
using namespace ak::test;

namespace {

// The worker's reply to `inmodel`: the kernel alone vs eager, `effect` % faster, noise `limit` %.
WorkerReply inModelReply(const json &args, double effect, double limit = 1.0)
{
    WorkerReply r;
    r.status = WorkerReply::Status::Ok;
    r.result = { { "kernel", args["kernels"][0]["name"] }, { "plugged", true }, { "routed_calls", 4 },
        { "parity", { { "ok", true } } }, { "effect_pct", effect }, { "limit_pct", limit },
        { "why", effect > limit ? "" : "no gain in the model beyond the noise" } };
    return r;
}

struct FakeWorker
{
    QVector<json> asked;
    QQueue<double> effects; // none left: +5 %
    int sleepMs = 0;

    InModelChecker::RequestFn fn()
    {
        return [this](const QString &op, const json &args, int) {
            asked.push_back(json { { "op", op.toStdString() }, { "args", args } });
            if (sleepMs > 0)
                QThread::msleep(sleepMs);
            return inModelReply(args, effects.isEmpty() ? 5.0 : effects.dequeue());
        };
    }
};

// Rules that never fire but the in-model one (`misses`), with a model file the check can name.
json rules(Rig &rig, int misses)
{
    const QString model = rig.tmp.filePath(QStringLiteral("model.py"));
    QFile f(model);
    if (f.open(QIODevice::WriteOnly))
        f.write("def get_model(): pass\n");
    json config = kNoRules;
    config["move_on"]["max_in_model_misses"] = misses;
    config["model_path"] = model.toStdString();
    return config;
}

// The rig's loop again, with the in-model check on a scripted worker and `budgetPct` of the loop's time.
void withInModelChecks(Rig &rig, FakeWorker &worker, double budgetPct)
{
    ExperimentLoopConfig cfg;
    cfg.label = QStringLiteral("test");
    cfg.quickBench = true;
    cfg.inModel.budgetPct = budgetPct;
    rig.loop = std::make_unique<ExperimentLoop>(
        rig.session.get(), &rig.agent, [&rig](const BenchRequest &r) { return rig.bench.run(r); }, cfg);
    rig.loop->setInModelRequest(worker.fn());
}

} // namespace

class InModelLoopTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aKeepIsCheckedInTheModelAndRecorded()
    {
        auto rig = std::make_unique<Rig>();
        Rig &r = *rig;
        QVERIFY2(r.create(rules(r, 0)), qPrintable(r.error));
        FakeWorker worker;
        withInModelChecks(r, worker, 100);
        r.bench.results.enqueue(ok(100, 0.5)); // baseline: 0.5x PyTorch
        STEP(r);
        QVERIFY(worker.asked.isEmpty()); // a baseline is no keep
        r.bench.results.enqueue(ok(40, 0.5)); // kept, 1.25x PyTorch in the harness
        STEP(r);
        const Experiment kept = r.last();
        QCOMPARE(kept.status, ExperimentStatus::Kept);
        QCOMPARE(worker.asked.size(), 1);
        const json &asked = worker.asked.first();
        QCOMPARE(asked["op"].get<std::string>(), std::string("inmodel"));
        QCOMPARE(asked["args"]["kernels"].size(), size_t(1));
        QCOMPARE(asked["args"]["kernels"][0]["name"].get<std::string>(), kA.toStdString());
        QCOMPARE(asked["args"]["device"].get<std::string>(), std::string("cpu"));
        QVERIFY(!asked["args"].contains("previous") && !asked["args"].contains("compile"));
        QCOMPARE(asked["args"]["seeds"].size(), size_t(1)); // cheap: one seed

        // Recorded where the window and `status` read it, verification.json untouched.
        const InModelCheck *c = r.state().inModel.latest(kA);
        QVERIFY(c);
        QCOMPARE(c->experiment, kept.id);
        QCOMPARE(c->effectPct, 5.0);
        QVERIFY(c->positive && c->harnessWin);
        QCOMPARE(c->harnessSpeedup, 1.25);
        QCOMPARE(c->expectedPct, 10.0); // Amdahl: A's 50 % share x (1 - 1 / 1.25)
        QVERIFY(!QFileInfo::exists(QDir(r.dir).filePath(QStringLiteral("verification.json"))));
        const RunSnapshotPtr reader = RunLoader::load(r.dir);
        QVERIFY(reader && reader->inModel.latest(kA) && reader->inModel.latest(kA)->experiment == kept.id);
        QVERIFY2(
            r.messages.join(QLatin1Char('\n')).contains(QStringLiteral("in the model +5.00% alone vs eager")),
            qPrintable(r.messages.join(QLatin1Char('\n'))));

        // A revert is not checked.
        r.bench.results.enqueue(ok(60, 0.5));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Reverted);
        QCOMPARE(worker.asked.size(), 1);
    }

    void aKeepSlowerThanPyTorchIsNotChecked()
    {
        // Kept (faster than the baseline) yet 0.625x PyTorch: no harness win, so the model is not asked
        // (verify would not offer it either); the first keep that beats PyTorch is.
        auto rig = std::make_unique<Rig>();
        Rig &r = *rig;
        QVERIFY2(r.create(rules(r, 0)), qPrintable(r.error));
        FakeWorker worker;
        withInModelChecks(r, worker, 100);
        r.bench.results.enqueue(ok(100, 0.5));
        STEP(r);
        r.bench.results.enqueue(ok(80, 0.5));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        QVERIFY(worker.asked.isEmpty());
        QVERIFY(!r.state().inModel.latest(kA));
        r.bench.results.enqueue(ok(40, 0.5));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        QCOMPARE(worker.asked.size(), 1);
    }

    void harnessWinsNotSeenInTheModelMoveOn()
    {
        auto rig = std::make_unique<Rig>();
        Rig &r = *rig;
        QVERIFY2(r.create(rules(r, 2)), qPrintable(r.error));
        FakeWorker worker;
        worker.effects << 0.3 << -0.5;
        withInModelChecks(r, worker, 100);
        r.bench.results.enqueue(ok(100, 0.5));
        STEP(r);
        r.bench.results.enqueue(ok(40, 0.5)); // a harness win (1.25x PyTorch) ...
        STEP(r);
        QCOMPARE(r.state().inModel.missesInARow(kA), 1); // ... that the model does not show
        QCOMPARE(r.kernel(kA).state, KernelState::Active);
        r.bench.results.enqueue(ok(30, 0.5));
        STEP(r);
        QCOMPARE(r.state().inModel.missesInARow(kA), 2);
        // The next claim retires the kernel with the rule's reason and works on the next one.
        r.bench.results.enqueue(ok(100, 0.5)); // B's baseline
        STEP(r);
        QCOMPARE(r.kernel(kA).state, KernelState::Done);
        QVERIFY2(r.kernel(kA).stateReason.contains(QStringLiteral("showed no gain in the model")),
            qPrintable(r.kernel(kA).stateReason));
        QVERIFY(r.messages.join(QLatin1Char('\n')).contains(QStringLiteral("01-softmax: moving on (2 kept")));
        QCOMPARE(r.lastBenchKernel(), kB);
    }

    void checksAreRationedByTheirShareOfTheLoopsTime()
    {
        auto rig = std::make_unique<Rig>();
        Rig &r = *rig;
        QVERIFY2(r.create(rules(r, 0)), qPrintable(r.error));
        FakeWorker worker;
        worker.sleepMs = 200; // a check that costs far more than 1 % of these fast steps
        withInModelChecks(r, worker, 1);
        r.bench.results.enqueue(ok(100, 0.5));
        STEP(r);
        r.bench.results.enqueue(ok(40, 0.5));
        STEP(r);
        QCOMPARE(worker.asked.size(), 1); // the first check is free
        r.bench.results.enqueue(ok(30, 0.5));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        QCOMPARE(worker.asked.size(), 1); // over budget: this keep waits for a later one
        QCOMPARE(r.state().inModel.checks.size(), 1);

        // 0 switches the checks off.
        withInModelChecks(r, worker, 0);
        r.bench.results.enqueue(ok(20, 0.5));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        QCOMPARE(worker.asked.size(), 1);
    }
};

AK_TEST_CLASS(InModelLoopTest)
#include "tst_inmodelloop.moc"
