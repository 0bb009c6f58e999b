// View ▸ Presentation: the shown run full screen in large type, its headline the measured speedup
// when verified (else the projection), the latest kept change's diff, following live reloads; Esc
// leaves it.
#include "diffview.h"
#include "mainwindow.h"
#include "modelspeedupchart.h"
#include "numberformat.h"
#include "presentationview.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"

#include <QAction>
#include <QSignalSpy>
#include <QTest>

using namespace ak;

class PresentationTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void followsTheRunAndLeavesOnEscape()
    {
        MainWindow w;
        w.show();
        w.setBlobReader([](const QString &, const QString &commit, const QString &, QString *) {
            return QStringLiteral("BLOCK = %1\n").arg(commit.right(1)).toUtf8();
        });
        QAction *present = test::named<QAction>(&w, "PresentationAction");
        QVERIFY(!present->isEnabled()); // no run yet
        auto run = test::makeRun(QStringLiteral("/runs/p"));
        const QDateTime t0 = QDateTime::currentDateTimeUtc().addSecs(-600);
        for (Experiment &e : run->experiments)
            e.finished = t0.addSecs(60 * e.id);
        w.showSnapshot(run);
        QVERIFY(present->isEnabled());

        PresentationView *p = w.presentation();
        QSignalSpy diffs(p->diffView(), &DiffView::diffShown);
        present->trigger();
        QVERIFY(p->isVisible());
        QVERIFY(p->isFullScreen());
        QVERIFY(p->font().pointSizeF() > w.font().pointSizeF() * 1.3); // large type
        // Not verified: the headline is the projection, and the note says it is one.
        QCOMPARE(p->headline(), formatRatio(run->projectedSpeedup()));
        QVERIFY(p->modelChart()->isShowingChart());
        // The newest change that moved a kernel forward (6, pending on softmax), and its kernel charted.
        QCOMPARE(p->shownExperiment(), 6);
        QCOMPARE(p->shownKernel(), QStringLiteral("02-softmax"));
        QTRY_COMPARE_WITH_TIMEOUT(diffs.count(), 1, 5000);
        QVERIFY(p->diffView()->title(1).contains(QStringLiteral("experiment 6")));

        // A reload with a new keep and a verification: the presentation follows without a click.
        auto next = std::make_shared<RunSnapshot>(*run);
        Experiment kept = test::experiment(7, QStringLiteral("01-matmul"), ExperimentStatus::Kept, 1.8, 70);
        kept.finished = t0.addSecs(60 * 7);
        next->experiments.append(kept);
        next->experimentIndex.insert(7, next->experiments.size() - 1);
        next->kernels[0].headExperiment = 7;
        ModelVerification v;
        v.modelSpeedup = 1.27;
        next->verification = v;
        w.showSnapshot(next);
        QCOMPARE(p->headline(), formatRatio(1.27));
        QCOMPARE(p->shownExperiment(), 7);
        QCOMPARE(p->shownKernel(), QStringLiteral("01-matmul"));
        QTRY_VERIFY_WITH_TIMEOUT(p->diffView()->title(1).contains(QStringLiteral("experiment 7")), 5000);
        QCOMPARE(p->modelChart()->timeline().last().second, next->projectedSpeedup());

        QTest::keyClick(p, Qt::Key_Escape);
        QVERIFY(!p->isVisible());
        // Hidden, it is not fed: the window's reloads cost nothing for it.
        w.showSnapshot(run);
        QCOMPARE(p->shownExperiment(), 7);
    }
};

AK_TEST_CLASS(PresentationTest)
#include "tst_presentation.moc"
