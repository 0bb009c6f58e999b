// RunStats::projectedTimeline: the run-level projection in the order results came in, each point
// computed from only what was known at its time. The loop numbers every kernel's baseline when it
// starts (ids 1..n) but measures each one only when it reaches that kernel, after other kernels'
// keeps: an id-order timeline went back in time on the Model tab and in the report.
#include "amdahl.h"
#include "runsnapshot.h"
#include "runstats.h"
#include "testregistry.h"

#include <QDateTime>

using namespace ak;

namespace {

KernelRecord statsKernel(int rank, const QString &op, double share)
{
    KernelRecord k;
    k.rank = rank;
    k.opType = op;
    k.folder = QStringLiteral("kernels/%1-%2").arg(rank, 2, 10, QLatin1Char('0')).arg(op);
    k.share = share;
    return k;
}

Experiment statsExperiment(
    int id, const QString &kernel, ExperimentStatus status, double speedup, const QDateTime &finished)
{
    Experiment e;
    e.id = id;
    e.kernel = kernel;
    e.status = status;
    e.metrics.correct = true;
    e.metrics.speedup = speedup;
    e.started = finished.addSecs(-1);
    e.finished = finished;
    return e;
}

} // namespace

class RunStatsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void projectedTimelineFollowsTheOrderResultsCameIn()
    {
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-06T21:17:00Z"), Qt::ISODate);
        RunSnapshot run;
        run.kernels = { statsKernel(1, QStringLiteral("matmul"), 0.5),
            statsKernel(2, QStringLiteral("softmax"), 0.3) };
        const QString mm = QStringLiteral("01-matmul"), sm = QStringLiteral("02-softmax");
        // As the tune loop records it: both baselines numbered first, the softmax's measured only
        // once the loop reaches it, after the matmul's keeps; a keep of the softmax last.
        run.experiments = { statsExperiment(1, mm, ExperimentStatus::Baseline, 1.0, t0.addSecs(10)),
            statsExperiment(2, sm, ExperimentStatus::Baseline, 1.25, t0.addSecs(100)),
            statsExperiment(3, mm, ExperimentStatus::Kept, 2.0, t0.addSecs(20)),
            statsExperiment(4, mm, ExperimentStatus::Reverted, 3.0, t0.addSecs(30)),
            statsExperiment(5, mm, ExperimentStatus::Kept, 4.0, t0.addSecs(40)),
            statsExperiment(6, sm, ExperimentStatus::Kept, 1.5, t0.addSecs(110)) };
        for (int i = 0; i < run.experiments.size(); ++i)
            run.experimentIndex.insert(run.experiments[i].id, i);

        const auto timeline = RunStats::projectedTimeline(run);
        QVector<int> ids;
        for (const auto &p : timeline)
            ids << p.first;
        QCOMPARE(ids, (QVector<int> { 1, 3, 5, 2, 6 })); // the revert is no head
        for (int i = 1; i < timeline.size(); ++i)
            QVERIFY(run.experiment(timeline[i - 1].first)->finished
                <= run.experiment(timeline[i].first)->finished);

        // What was known at each point: the heads decided by then, and nothing decided later.
        const auto amdahl = [](double mmSpeedup, double smSpeedup) {
            return Amdahl::projectedFromSpeedups({ { 0.5, mmSpeedup }, { 0.3, smSpeedup } });
        };
        QCOMPARE(timeline[0].second, 1.0); // the matmul's baseline: as fast as PyTorch
        QCOMPARE(timeline[1].second, amdahl(2.0, NAN)); // 1 / (1 - 0.25): the softmax not measured yet
        QCOMPARE(timeline[2].second, amdahl(4.0, NAN));
        QCOMPARE(timeline[3].second, amdahl(4.0, 1.25)); // the softmax's baseline, at last
        QCOMPARE(timeline[4].second, amdahl(4.0, 1.5));
        QCOMPARE(timeline[1].second, 1.0 / (1.0 - 0.25));
        QCOMPARE(timeline.last().second, amdahl(4.0, 1.5)); // the heads the loader sets

        // Same time: by id. No time at all (never in a real run): last, by id.
        run.experiments[1].finished = run.experiments[2].finished; // #2 and #3 both at t0 + 20 s
        run.experiments[3].finished = QDateTime(); // the revert: no head either way
        QCOMPARE(RunStats::projectedTimeline(run)[1].first, 2);
        QCOMPARE(RunStats::projectedTimeline(run)[2].first, 3);
        run.experiments[1].finished = t0.addSecs(300); // the softmax's baseline, now the latest in time
        run.experiments[5].started = run.experiments[5].finished = QDateTime(); // its keep: no time
        QCOMPARE(RunStats::projectedTimeline(run).last().first, 6);
    }

    void anOlderHeadDecidedLateDoesNotReplaceANewerOne()
    {
        // The loader's head is the kernel's newest keep or baseline by id; a baseline whose record
        // came in after a keep (a hand-edited or repaired log) must not undo that keep.
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-06T21:17:00Z"), Qt::ISODate);
        RunSnapshot run;
        run.kernels = { statsKernel(1, QStringLiteral("matmul"), 0.5) };
        const QString mm = QStringLiteral("01-matmul");
        run.experiments = { statsExperiment(1, mm, ExperimentStatus::Baseline, 1.0, t0.addSecs(50)),
            statsExperiment(2, mm, ExperimentStatus::Kept, 2.0, t0.addSecs(20)) };
        for (int i = 0; i < run.experiments.size(); ++i)
            run.experimentIndex.insert(run.experiments[i].id, i);
        const auto timeline = RunStats::projectedTimeline(run);
        QCOMPARE(timeline.size(), 1);
        QCOMPARE(timeline[0].first, 2);
        QCOMPARE(timeline[0].second, 1.0 / (1.0 - 0.25));
    }

    void decidedAtIsTheFinishOrTheStart()
    {
        Experiment e;
        QVERIFY(!RunStats::decidedAt(e).isValid());
        e.started = QDateTime::fromString(QStringLiteral("2026-12-06T21:17:00Z"), Qt::ISODate);
        QCOMPARE(RunStats::decidedAt(e), e.started); // a baseline not measured yet
        e.finished = e.started.addSecs(5);
        QCOMPARE(RunStats::decidedAt(e), e.finished);
    }
};

AK_TEST_CLASS(RunStatsTest)
#include "tst_runstats.moc"
