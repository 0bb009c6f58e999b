// RunReplay: a run played back frame by frame shows, at its last frame, what a load shows; every
// frame holds exactly the experiments that had ended by then; scrubbing back and forth gives the same
// snapshots as playing forward; the run-level speedup chart of a frame is the run's up to then.
#include "experimentlog.h"
#include "runloader.h"
#include "runreplay.h"
#include "runstats.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QTemporaryDir>

using namespace ak;

namespace {

QVector<int> ids(const RunSnapshot &s)
{
    QVector<int> out;
    for (const Experiment &e : s.experiments)
        out << e.id;
    return out;
}

QStringList heads(const RunSnapshot &s)
{
    QStringList out;
    for (const KernelRecord &k : s.kernels)
        out << k.head;
    return out;
}

} // namespace

class RunReplayTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void framesFollowTheLog()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), nlohmann::json { { "model", "tiny.py" } },
            { test::testKernel(1, QStringLiteral("matmul")),
                test::testKernel(2, QStringLiteral("softmax")) }));
        {
            QString error;
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 1.5, ExperimentStatus::Kept);
            test::recordExperiment(*store, QStringLiteral("02-softmax"), 0.9, ExperimentStatus::Reverted);
            QVERIFY(store->pin(QStringLiteral("02-softmax"), QStringLiteral("enough"), &error));
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 2.0, ExperimentStatus::Kept);
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 1.8, ExperimentStatus::Reverted);
        }
        QString error;
        auto replay = RunReplay::open(tmp.path(), &error);
        QVERIFY2(replay, qPrintable(error));
        // One frame per baseline (the run's creation benches none here, but records each kernel's
        // starter) and per experiment.
        const RunSnapshotPtr loaded = RunLoader::load(tmp.path());
        const int b = int(loaded->experiments.size()) - 4;
        QCOMPARE(replay->frameCount(), b + 4);

        const RunSnapshotPtr start = replay->snapshotAt(0);
        QCOMPARE(start->kernels.size(), 2);
        QVERIFY(start->experiments.isEmpty());
        QCOMPARE(replay->frameExperiment(0), 0);

        const RunSnapshotPtr end = replay->snapshotAt(replay->frameCount());
        QCOMPARE(ids(*end), ids(*loaded));
        QCOMPARE(heads(*end), heads(*loaded));
        QCOMPARE(end->kernels[1].state, KernelState::Pinned);
        QCOMPARE(end->bestCommit, loaded->bestCommit);

        // Frame f: the experiments that had ended; the pin came with the second experiment's frame.
        for (int f = 1; f <= replay->frameCount(); ++f) {
            const RunSnapshotPtr s = replay->snapshotAt(f);
            QCOMPARE(s->experiments.size(), f);
            QCOMPARE(s->experiments.last().id, replay->frameExperiment(f));
            QCOMPARE(s->kernels[1].state == KernelState::Pinned, f >= b + 3);
            QCOMPARE(s->bestCommit.isEmpty(), f < replay->frameCount() || loaded->bestCommit.isEmpty());
            QVERIFY(replay->frameTime(f) >= replay->frameTime(f - 1));
            QVERIFY(replay->secondsInto(f) >= 0);
        }
        // The matmul's head after the first experiment is that keep, after the third the second keep.
        QCOMPARE(replay->snapshotAt(b + 1)->kernels[0].headExperiment, replay->frameExperiment(b + 1));
        QCOMPARE(replay->snapshotAt(b + 3)->kernels[0].headExperiment, replay->frameExperiment(b + 3));
        QCOMPARE(replay->snapshotAt(b + 4)->kernels[0].headExperiment, replay->frameExperiment(b + 3));

        // Scrubbing back and forth gives what a fresh replay gives playing forward.
        for (int f : { b + 4, 1, b + 3, b + 2, b + 2, 0, b + 4 }) {
            const RunSnapshotPtr a = replay->snapshotAt(f);
            const RunSnapshotPtr b = RunReplay::open(tmp.path(), &error)->snapshotAt(f);
            QCOMPARE(ids(*a), ids(*b));
            QCOMPARE(heads(*a), heads(*b));
        }
        QCOMPARE(replay->snapshotAt(99)->experiments.size(), b + 4); // clamped
    }

    void projectedTimelineGrowsWithTheFrames()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), nlohmann::json { { "model", "tiny.py" } },
            { test::testKernel(1, QStringLiteral("matmul"), "BASE = 1\n", QStringLiteral("matmul"), 0.6),
                test::testKernel(
                    2, QStringLiteral("softmax"), "BASE = 1\n", QStringLiteral("softmax"), 0.3) }));
        {
            QString error;
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 1.5, ExperimentStatus::Kept);
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 1.2, ExperimentStatus::Reverted);
            test::recordExperiment(*store, QStringLiteral("02-softmax"), 3.0, ExperimentStatus::Kept);
        }
        // The run-level chart of a replay frame (RunStats::projectedTimeline of its snapshot) is the
        // finished run's timeline up to that frame: the chart grows as the replay plays.
        auto replay = RunReplay::open(tmp.path());
        QVERIFY(replay);
        const auto full = RunStats::projectedTimeline(*RunLoader::load(tmp.path()));
        const int b = replay->frameCount() - 3; // the kernels' baselines come first
        QCOMPARE(full.size(), b + 2); // every baseline, then the two keeps (the revert is no head)
        QVERIFY(full.last().second > full[full.size() - 2].second);
        QCOMPARE(full.last().second, RunLoader::load(tmp.path())->projectedSpeedup());
        for (int f = 0; f <= replay->frameCount(); ++f) {
            const auto part = RunStats::projectedTimeline(*replay->snapshotAt(f));
            QCOMPARE(part, full.mid(0, part.size()));
            QCOMPARE(part.isEmpty() ? 1.0 : part.last().second, replay->snapshotAt(f)->projectedSpeedup());
        }
        QCOMPARE(RunStats::projectedTimeline(*replay->snapshotAt(b + 1)).size(), b + 1);
        QCOMPARE(RunStats::projectedTimeline(*replay->snapshotAt(b + 2)).size(), b + 1);
    }

    void notARun()
    {
        QTemporaryDir tmp;
        QString error;
        QVERIFY(!RunReplay::open(tmp.path(), &error));
        QVERIFY(error.contains(QStringLiteral("run.json")));
    }
};

AK_TEST_CLASS(RunReplayTest)
#include "tst_runreplay.moc"
