// RunHeadline: the run's headline in three parts — the starters over PyTorch, the loop on top of
// them (on the kernel's own time, as the keep rule decides), what was measured in the model — from
// synthetic runs and from the shipped H200 recording (issue #41: it opened on "2.29× projected"), and
// from the shipped H100 llama recording that was verified in the model.
#include "numberformat.h"
#include "runheadline.h"
#include "runloader.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QTemporaryDir>
#include <QTest>

using namespace ak;

namespace {

KernelRecord headlineKernel(int rank, const QString &op, double share)
{
    KernelRecord k;
    k.rank = rank;
    k.opType = op;
    k.folder = QStringLiteral("kernels/%1-%2").arg(rank, 2, 10, QLatin1Char('0')).arg(op);
    k.share = share;
    return k;
}

Experiment measured(int id, const QString &kernel, ExperimentStatus status, double speedup, double us)
{
    Experiment e;
    e.id = id;
    e.kernel = kernel;
    e.status = status;
    e.metrics.correct = true;
    e.metrics.speedup = speedup;
    e.metrics.latencyUs = us;
    return e;
}

void index(RunSnapshot &run)
{
    run.kernelIndex.clear();
    run.experimentIndex.clear();
    for (int i = 0; i < run.kernels.size(); ++i)
        run.kernelIndex.insert(run.kernels[i].key(), i);
    for (int i = 0; i < run.experiments.size(); ++i)
        run.experimentIndex.insert(run.experiments[i].id, i);
}

} // namespace

class RunHeadlineTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void startersAndLoopDivideByWhatTheySay()
    {
        RunSnapshot run;
        run.kernels = { headlineKernel(1, QStringLiteral("matmul"), 0.5),
            headlineKernel(2, QStringLiteral("softmax"), 0.3),
            headlineKernel(3, QStringLiteral("gelu"), 0.1) };
        // matmul: starter 2× PyTorch, kept to 80 µs from 100 µs; softmax: starter slower than
        // PyTorch (left out), never kept; gelu: no baseline measured yet.
        run.experiments = { measured(1, QStringLiteral("01-matmul"), ExperimentStatus::Baseline, 2.0, 100),
            measured(2, QStringLiteral("02-softmax"), ExperimentStatus::Baseline, 0.8, 50),
            measured(3, QStringLiteral("01-matmul"), ExperimentStatus::Kept, 2.5, 80),
            measured(4, QStringLiteral("01-matmul"), ExperimentStatus::Reverted, 2.6, 82) };
        run.kernels[0].headExperiment = 3;
        run.kernels[1].headExperiment = 2;
        index(run);
        const RunHeadline h = RunHeadline::of(run);
        // Starters: 1 − 0.5 × (1 − 1/2) = 0.75 of PyTorch's time → 1.333×.
        QCOMPARE(h.startersMeasured, 2);
        QVERIFY(qAbs(h.starters - 1.0 / 0.75) < 1e-9);
        // Heads: matmul at 0.5 × 0.8 = 0.4 of PyTorch's → 1 − 0.5 × 0.6 = 0.7; loop = 0.75/0.7 − 1.
        QVERIFY(qAbs(h.loopPct - (0.75 / 0.7 - 1.0) * 100.0) < 1e-9);
        QCOMPARE(h.gains.size(), 1);
        QCOMPARE(h.gains[0].kernel, QStringLiteral("01-matmul"));
        QCOMPARE(h.gains[0].baseline, 1);
        QCOMPARE(h.gains[0].head, 3);
        QVERIFY(qAbs(h.gains[0].pct() - 25.0) < 1e-9);
        QCOMPARE(h.text(), QStringLiteral("starters 1.33× · loop +7.1 % · model not verified"));
        QVERIFY2(h.explanation().contains(QStringLiteral("01-matmul: 100.0 µs → 80.0 µs (#1 → #3), +25.0 %")),
            qPrintable(h.explanation()));
        QVERIFY(h.recordingLabel().isEmpty());
    }

    void theLoopIsJudgedOnTheKernelsOwnTime()
    {
        // The CPU case of #41: PyTorch re-measured per experiment makes a kept head read *lower* over
        // PyTorch than its baseline. The keep rule compared latencies, so the loop's part is a gain.
        RunSnapshot run;
        run.kernels = { headlineKernel(1, QStringLiteral("matmul"), 0.6) };
        run.experiments = { measured(1, QStringLiteral("01-matmul"), ExperimentStatus::Baseline, 0.45, 1000),
            measured(2, QStringLiteral("01-matmul"), ExperimentStatus::Kept, 0.41, 900) };
        run.kernels[0].headExperiment = 2;
        index(run);
        const RunHeadline h = RunHeadline::of(run);
        QCOMPARE(h.starters, 1.0); // slower than PyTorch: left out, as verify would
        QCOMPARE(h.loopPct, 0.0); // 0.45 → 0.45 × 1000/900 = 0.5 over PyTorch: still slower, still out
        QCOMPARE(h.gains.size(), 1);
        QVERIFY(h.gains[0].pct() > 11.0); // the kernel's own gain is still shown, per kernel
    }

    void measuredCarriesDateAndDevice()
    {
        RunSnapshot run;
        run.kernels = { headlineKernel(1, QStringLiteral("matmul"), 0.5) };
        run.experiments = { measured(1, QStringLiteral("01-matmul"), ExperimentStatus::Baseline, 2.0, 10) };
        run.kernels[0].headExperiment = 1;
        index(run);
        ModelVerification v;
        v.modelSpeedup = 1.04;
        v.when = QDateTime::fromString(QStringLiteral("2026-12-06T10:00:00Z"), Qt::ISODate);
        v.deviceName = QStringLiteral("NVIDIA H200");
        v.finalSet = { QStringLiteral("01-matmul") };
        v.parityOk = true;
        run.verification = v;
        run.recording = QStringLiteral("a recording of gpt2 on NVIDIA H200 (2026-12-06)");
        const RunHeadline h = RunHeadline::of(run);
        QCOMPARE(h.text(),
            QStringLiteral("starters 1.33× · loop 0.0 % · model 1.04× measured 2026-12-06 on NVIDIA H200"));
        // The date and device are in text() beside it, not said twice.
        QCOMPARE(h.recordingLabel(), QStringLiteral("Recording · verified"));
        run.verification.reset();
        QCOMPARE(
            RunHeadline::of(run).recordingLabel(), QStringLiteral("Recording · not verified in the model"));
    }

    void noBaselineYetSaysNothing()
    {
        RunSnapshot run;
        run.kernels = { headlineKernel(1, QStringLiteral("matmul"), 0.5) };
        index(run);
        const RunHeadline h = RunHeadline::of(run);
        QCOMPARE(h.text(), QStringLiteral("starters — · loop — · model not verified"));
    }

    void theShippedH200Recording()
    {
        // Its projection (2.29×) is mostly the starters over eager PyTorch; the loop kept +1.7 % on
        // softmax and +1.5 % on layernorm (own latency), a small part of the model.
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(QStringLiteral("rec"));
        const QString restored = test::restoreShippedRecording(QStringLiteral("h200-heldout-tune"), dir);
        QVERIFY2(restored.isEmpty(), qPrintable(restored));
        QString error;
        const RunSnapshotPtr run = RunLoader::load(dir, &error);
        QVERIFY2(run, qPrintable(error));
        const RunHeadline h = RunHeadline::of(*run);
        QCOMPARE(h.startersMeasured, 5);
        QVERIFY2(h.starters > 1.5, qPrintable(h.text()));
        QVERIFY2(h.loopPct > 0 && h.loopPct < 2.0, qPrintable(h.text()));
        // Starters × loop is the projection the window drew before (within the loop's PyTorch noise).
        QVERIFY2(qAbs(h.starters * (1 + h.loopPct / 100) / run->projectedSpeedup() - 1.0) < 0.02,
            qPrintable(QStringLiteral("%1 vs %2").arg(h.text()).arg(run->projectedSpeedup())));
        QCOMPARE(h.gains.size(), 2);
        QCOMPARE(h.gains[0].kernel, QStringLiteral("03-softmax"));
        QCOMPARE(formatSignedPercent(h.gains[0].pct()), QStringLiteral("+1.7 %"));
        QCOMPARE(h.gains[1].kernel, QStringLiteral("08-layernorm"));
        QCOMPARE(formatSignedPercent(h.gains[1].pct()), QStringLiteral("+1.5 %"));
        QVERIFY(!h.verified);
        QCOMPARE(h.recordingLabel(), QStringLiteral("Recording · not verified in the model"));
    }

    void theShippedVerifiedRecording()
    {
        // The llama example tuned and verified on an H100 (2026-12-07): its headline is the number
        // verify measured in the model, with its date and device, and the recording says verified.
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(QStringLiteral("rec"));
        const QString restored = test::restoreShippedRecording(QStringLiteral("h100-llama-verified"), dir);
        QVERIFY2(restored.isEmpty(), qPrintable(restored));
        QString error;
        const RunSnapshotPtr run = RunLoader::load(dir, &error);
        QVERIFY2(run, qPrintable(error));
        QVERIFY(run->verification);
        const RunHeadline h = RunHeadline::of(*run);
        QVERIFY(h.verified);
        QVERIFY(h.parityOk);
        QCOMPARE(h.finalSetSize, 3);
        QCOMPARE(formatRatio(h.measured), QStringLiteral("1.43×"));
        QCOMPARE(h.measuredText(), QStringLiteral("1.43× measured 2026-12-07 on NVIDIA H100 80GB HBM3"));
        QCOMPARE(h.recordingLabel(), QStringLiteral("Recording · verified"));
        QVERIFY2(
            h.text().endsWith(QStringLiteral("model 1.43× measured 2026-12-07 on NVIDIA H100 80GB HBM3")),
            qPrintable(h.text()));
        QVERIFY2(run->recording.contains(QStringLiteral("llama")), qPrintable(run->recording));
    }
};

AK_TEST_CLASS(RunHeadlineTest)
#include "tst_runheadline.moc"
