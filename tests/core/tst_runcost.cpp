// RunCost (#43 item 6): what the loop's search cost per experiment, per kept kernel and per point of
// model speedup, in money with a price, else tokens, else time, against the measured model speedup
// where verified and the projected one otherwise; and (#38) which kept kernels gained in the model.
#include "runcost.h"
#include "runsnapshot.h"
#include "testregistry.h"

using namespace ak;

namespace {

Experiment costExperiment(int id, ExperimentStatus status, double speedup, qint64 tokens, double usd)
{
    Experiment e;
    e.id = id;
    e.kernel = QStringLiteral("01-matmul");
    e.status = status;
    e.metrics.correct = true;
    e.metrics.speedup = speedup;
    e.tokensIn = tokens * 2 / 3;
    e.tokensOut = tokens - e.tokensIn;
    e.cost = usd;
    e.agentSeconds = 10;
    e.benchSeconds = 6;
    return e;
}

// One kernel, half of the model's time: a baseline at PyTorch's speed, a keep at 2x, a revert.
RunSnapshot costRun(double usdKeep, double usdRevert, qint64 tokens)
{
    RunSnapshot run;
    KernelRecord k;
    k.rank = 1;
    k.opType = QStringLiteral("matmul");
    k.folder = QStringLiteral("kernels/01-matmul");
    k.share = 0.5;
    k.headExperiment = 2;
    run.kernels = { k };
    run.experiments = { costExperiment(1, ExperimentStatus::Baseline, 1.0, 0, 0),
        costExperiment(2, ExperimentStatus::Kept, 2.0, tokens, usdKeep),
        costExperiment(3, ExperimentStatus::Reverted, 0.8, tokens, usdRevert) };
    for (int i = 0; i < run.experiments.size(); ++i) // what the loader keeps: experiment(id) finds the head
        run.experimentIndex.insert(run.experiments[i].id, i);
    return run;
}

} // namespace

class RunCostTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // #38: of the kernels the loop kept a change in, those verify measured saving time in the model.
    void keptKernelsThatGainInTheModel()
    {
        RunSnapshot run = costRun(0, 0, 0); // 01-matmul: a keep
        auto keep = [&run](int id, const char *kernel, ExperimentStatus status) {
            Experiment e = costExperiment(id, status, 1.5, 0, 0);
            e.kernel = QString::fromLatin1(kernel);
            run.experiments.append(e);
        };
        keep(4, "02-rmsnorm", ExperimentStatus::Kept);
        keep(5, "02-rmsnorm", ExperimentStatus::Kept); // two keeps, one kernel
        keep(6, "03-softmax", ExperimentStatus::Kept);
        keep(7, "04-gelu", ExperimentStatus::Reverted); // nothing kept: not counted
        keep(8, "05-silu", ExperimentStatus::Pending); // waiting for review: not in the model yet
        keep(9, "06-matmul", ExperimentStatus::Kept);
        run.experiments.last().metrics.speedup = 0.9; // kept, yet slower than PyTorch: no harness win
        for (const char *name : { "02-rmsnorm", "03-softmax", "06-matmul" }) {
            KernelRecord r;
            r.folder = QStringLiteral("kernels/") + QString::fromLatin1(name);
            r.headExperiment = name[1] == '2' ? 5 : name[1] == '3' ? 6 : 9;
            run.kernelIndex.insert(KernelRecord::keyOf(r.folder), int(run.kernels.size()));
            run.kernels.append(r);
        }
        for (int i = 0; i < run.experiments.size(); ++i)
            run.experimentIndex.insert(run.experiments[i].id, i);
        ModelVerification v;
        QCOMPARE(run.keptInModel(v).kept.size(), 3);
        QCOMPARE(run.keptInModel(v).slower, QStringList({ "06-matmul" }));
        QVERIFY(run.keptInModel(v).gains.isEmpty()); // nothing timed in the model: no gain measured

        KernelVerification k;
        k.kernel = QStringLiteral("01-matmul");
        k.effectPct = -2.0; // kept in the harness, slower in the model
        v.kernels.append(k);
        k.kernel = QStringLiteral("02-rmsnorm");
        k.effectPct = 3.1;
        v.kernels.append(k);
        k.kernel = QStringLiteral("04-gelu");
        k.effectPct = 5.0; // a gain, but the loop kept nothing there
        v.kernels.append(k);
        // 03-softmax: not timed in the model
        const RunSnapshot::KeptInModel r = run.keptInModel(v);
        QCOMPARE(r.kept, QStringList({ "01-matmul", "02-rmsnorm", "03-softmax" }));
        QCOMPARE(r.gains, QStringList({ "02-rmsnorm" }));
        // Negative left out of a set that lost together, yet in the final set: verify measured it
        // saving time alone, so it is a gain.
        v.kernels[0].inFinalSet = true;
        QCOMPARE(run.keptInModel(v).gains, QStringList({ "01-matmul", "02-rmsnorm" }));
    }

    void moneyPerExperimentKeptKernelAndProjectedPoint()
    {
        const RunCost c = RunCost::of(costRun(0.03, 0.05, 1500));
        QCOMPARE(c.unit(), RunCost::Unit::Money);
        QCOMPARE(c.experiments, 2); // the baseline is not an attempt
        QCOMPARE(c.keptKernels, 1);
        QVERIFY(!c.measured);
        QVERIFY(qAbs(c.speedupPoints - 100.0 / 3.0) < 1e-9); // 1 / (0.5 + 0.5 / 2) = 1.333x
        QVERIFY(qAbs(c.perExperiment() - 0.04) < 1e-12);
        QVERIFY(qAbs(c.perKeptKernel() - 0.08) < 1e-12);
        QVERIFY(qAbs(c.perPoint() - 0.08 / (100.0 / 3.0)) < 1e-12);
        QCOMPARE(c.text(),
            QStringLiteral(
                "$0.0400/experiment · $0.0800/kept kernel · $0.0024/point of model speedup (projected)"));
    }

    void theMeasuredSpeedupWinsWhenVerified()
    {
        RunSnapshot run = costRun(0.03, 0.05, 1500);
        ModelVerification v;
        v.modelSpeedup = 1.10;
        run.verification = v;
        const RunCost c = RunCost::of(run);
        QVERIFY(c.measured);
        QVERIFY(qAbs(c.perPoint() - 0.008) < 1e-12);
        QVERIFY(c.text().endsWith(QStringLiteral("(measured)")));
        // Verified slower or equal: nothing to divide by, said so.
        run.verification->modelSpeedup = 1.0;
        QVERIFY(RunCost::of(run).text().contains(QStringLiteral("no model speedup yet")));
    }

    void tokensWithoutAPriceAndTimeForTheTuneAgent()
    {
        const RunCost tokens = RunCost::of(costRun(0, 0, 15000));
        QCOMPARE(tokens.unit(), RunCost::Unit::Tokens);
        QCOMPARE(tokens.format(tokens.perExperiment()), QStringLiteral("15.0k tokens"));
        QVERIFY(tokens.text().contains(QStringLiteral("no price set")));
        const RunCost time = RunCost::of(costRun(0, 0, 0));
        QCOMPARE(time.unit(), RunCost::Unit::Time);
        QCOMPARE(time.total(), 48.0); // agent + bench, the baseline's included
        QCOMPARE(time.format(time.perExperiment()), QStringLiteral("24 s"));
        QCOMPARE(time.format(time.perKeptKernel()), QStringLiteral("48 s"));
        QCOMPARE(time.format(600), QStringLiteral("10.0 min"));
        QVERIFY(time.text().contains(QStringLiteral("(agent and bench time)")));
        QVERIFY(RunCost::of(RunSnapshot()).text().isEmpty());
    }
};

AK_TEST_CLASS(RunCostTest)
#include "tst_runcost.moc"
