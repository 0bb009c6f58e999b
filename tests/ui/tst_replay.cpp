#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "models/experimentmodel.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/replaybar.h"
#include "widgets/runworkspace.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QLabel>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

using namespace ak;

namespace {

bool recordRun(const QString &dir, int experiments)
{
    if (!test::makeRunDir(dir, nlohmann::json { { "model", "tiny.py" } },
            { test::testKernel(1, QStringLiteral("matmul"), "BASE = 1\n", QStringLiteral("matmul"), 0.5) }))
        return false;
    QString error;
    auto store = RunStore::open(dir, &error);
    for (int n = 1; store && n <= experiments; ++n) {
        const Experiment e = store->beginExperiment(QStringLiteral("01-matmul"),
            "BASE = " + QByteArray::number(n + 1) + "\n", QStringLiteral("test"),
            QStringLiteral("try %1").arg(n), &error);
        Metrics m;
        m.correct = true;
        m.latencyUs = 100.0 / (1 + n);
        m.speedup = 1 + n * 0.1;
        if (e.id == 0
            || !store->finishExperiment(
                e.id, n % 2 ? ExperimentStatus::Kept : ExperimentStatus::Reverted, m, QString(), &error))
            return false;
    }
    return bool(store);
}

} // namespace

// View ▸ Replay Run: the run shown as it stood at each point of its timeline, played or scrubbed;
// steering is off while it shows the past, and Back to Live returns to the run as it is.
class ReplayTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void scrubPlayAndBackToLive()
    {
        QTemporaryDir tmp;
        QVERIFY(recordRun(tmp.path(), 6));
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(test::openAndWait(w, tmp.path()));
        FakeLoopControl loop(LoopControl::CanSteerKernels | LoopControl::CanReview | LoopControl::CanRevert);
        w.setLoopControl(&loop);
        RunWorkspace *ws = test::named<RunWorkspace>(&w, "RunWorkspace");
        const int live = ws->experimentModel()->rowCount();
        QVERIFY(live >= 7); // the baseline and six experiments
        QTRY_VERIFY(ws->selectExperiment(ws->experimentModel()->rowAt(live - 1).id));
        QAction *pin = test::named<SteeringActions>(&w, "SteeringActions")->pin();
        QVERIFY(pin->isEnabled());

        ReplayBar *bar = test::named<ReplayBar>(&w, "replayBar");
        QSignalSpy started(bar, &ReplayBar::started);
        test::named<QAction>(&w, "ReplayRunAction")->trigger();
        QVERIFY(started.wait(10000));
        QCOMPARE(bar->frameCount(), live);
        QVERIFY(bar->isVisible());
        QVERIFY(!pin->isEnabled()); // the past is not steered
        QVERIFY(w.windowTitle().contains(QStringLiteral("Replay")));

        bar->pause();
        auto *timeline = test::named<QSlider>(bar, "replayTimeline");
        QCOMPARE(timeline->maximum(), live);
        timeline->setValue(3); // scrubbing shows the run after three experiments ended
        QCOMPARE(bar->frame(), 3);
        QCOMPARE(ws->experimentModel()->rowCount(), 3);
        QVERIFY(
            test::named<QLabel>(bar, "replayPosition")->text().contains(QStringLiteral("3 of %1").arg(live)));
        timeline->setValue(1); // and back
        QCOMPARE(ws->experimentModel()->rowCount(), 1);
        bar->seek(0);
        QCOMPARE(ws->experimentModel()->rowCount(), 0);

        // Played at 100 experiments per second it reaches the end and stops there.
        bar->setSpeed(100);
        bar->play();
        QVERIFY(bar->isPlaying());
        QTRY_COMPARE_WITH_TIMEOUT(bar->frame(), live, 5000);
        QTRY_VERIFY(!bar->isPlaying());
        QCOMPARE(timeline->value(), live);

        // A change to the run during the replay is not shown over it.
        bar->seek(2);
        w.reload();
        QTest::qWait(300);
        QCOMPARE(ws->experimentModel()->rowCount(), 2);

        QSignalSpy ended(bar, &ReplayBar::ended);
        test::named<QToolButton>(bar, "replayLive")->click();
        QCOMPARE(ended.count(), 1);
        QVERIFY(!bar->isVisible());
        QTRY_COMPARE(ws->experimentModel()->rowCount(), live);
        QVERIFY(!w.windowTitle().contains(QStringLiteral("Replay")));
        QTRY_VERIFY(ws->selectExperiment(ws->experimentModel()->rowAt(live - 1).id));
        QTRY_VERIFY(pin->isEnabled());
    }

    void notARunIsReported()
    {
        ReplayBar bar;
        QSignalSpy failed(&bar, &ReplayBar::failed);
        QTemporaryDir tmp;
        bar.start(tmp.path());
        QVERIFY(failed.wait(5000));
        QVERIFY(failed.first().first().toString().contains(QStringLiteral("run.json")));
        QVERIFY(!bar.isActive());
    }
};

AK_TEST_CLASS(ReplayTest)
#include "tst_replay.moc"
