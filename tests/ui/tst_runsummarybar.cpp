#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "modelfixture.h"
#include "numberformat.h"
#include "runsummarybar.h"
#include "runworkspace.h"
#include "steeringactions.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"

#include <QAction>
#include <QLabel>
#include <QPointer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ak;

// The strip above the kernel table: the model's measured and projected speedup, the experiments by
// outcome, where the loop runs, on which kernel and at what pace.
class RunSummaryBarTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void countsProjectionAndPace()
    {
        auto run = test::makeRun(QStringLiteral("/runs/x"));
        // Six finishes a minute apart: 5 intervals in 5 minutes = 60 per hour; then one running.
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-03T10:00:00Z"), Qt::ISODate);
        for (int i = 0; i < run->experiments.size(); ++i) {
            run->experiments[i].started = t0.addSecs(60 * i - 30);
            run->experiments[i].finished = t0.addSecs(60 * i);
        }
        Experiment running
            = test::experiment(7, QStringLiteral("02-softmax"), ExperimentStatus::Running, 1, 1);
        running.finished = QDateTime();
        run->experiments.append(running);
        run->experimentIndex.insert(7, run->experiments.size() - 1);

        RunSummaryBar bar;
        bar.setSnapshot(*run);
        QCOMPARE(test::named<QLabel>(&bar, "SummaryCounts")->text(),
            QStringLiteral(
                "6 experiments: 2 kept · 1 pending · 1 reverted · 1 failed · 0 rejected · 1 running"));
        QVERIFY2(
            test::named<QLabel>(&bar, "SummaryModel")
                ->text()
                .contains(formatRatio(run->projectedSpeedup()) + QStringLiteral(" projected · not verified")),
            qPrintable(test::named<QLabel>(&bar, "SummaryModel")->text()));
        QCOMPARE(test::named<QLabel>(&bar, "SummaryLoop")->text(), QStringLiteral("No loop running"));
        bar.setLoop(QStringLiteral("in this window"));
        QCOMPARE(test::named<QLabel>(&bar, "SummaryLoop")->text(),
            QStringLiteral("Loop running in this window · on 02-softmax · 60 experiments/h"));
    }

    void windowSaysWhereTheLoopRuns()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY2(test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        MainWindow w;
        QPointer<FakeLoopControl> loop;
        w.setLoopFactory([&loop](const QString &, QObject *parent) -> LoopControl * {
            loop = new FakeLoopControl(LoopControl::CanStartStop, parent);
            return loop;
        });
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(dir.path());
        QTRY_COMPARE(loaded.count(), 1);
        RunSummaryBar *bar = test::named<RunWorkspace>(&w, "RunWorkspace")->summaryBar();
        QVERIFY2(test::named<QLabel>(bar, "SummaryModel")
                     ->text()
                     .contains(QStringLiteral("<b>1.03×</b> measured")),
            qPrintable(test::named<QLabel>(bar, "SummaryModel")->text()));
        QVERIFY(test::named<QLabel>(bar, "SummaryCounts")
                    ->text()
                    .startsWith(QStringLiteral("7 experiments: 7 kept")));
        QCOMPARE(test::named<QLabel>(bar, "SummaryLoop")->text(), QStringLiteral("No loop running"));
        QTRY_VERIFY(test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled());
        test::named<SteeringActions>(&w, "SteeringActions")->start()->trigger();
        QVERIFY(loop);
        loop->setState(LoopControl::State::Running);
        QVERIFY2(test::named<QLabel>(bar, "SummaryLoop")
                     ->text()
                     .startsWith(QStringLiteral("Loop running in this window")),
            qPrintable(test::named<QLabel>(bar, "SummaryLoop")->text()));
        loop->setState(LoopControl::State::Stopped);
        QTRY_COMPARE(test::named<QLabel>(bar, "SummaryLoop")->text(), QStringLiteral("No loop running"));
    }
};

AK_TEST_CLASS(RunSummaryBarTest)
#include "tst_runsummarybar.moc"
