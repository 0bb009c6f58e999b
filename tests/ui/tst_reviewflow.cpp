#include "answerdialog.h"
#include "fakeloopcontrol.h"
#include "models/experimentmodel.h"
#include "models/kernelfilterproxy.h"
#include "models/kerneltablemodel.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/runworkspace.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QLineEdit>
#include <QTableView>
#include <QTest>

using namespace ak;

// A review pass you can trust: Restore named for what it does and offered for every version the store
// can restore; single-key shortcuts; Next Pending walks the experiments waiting for review.
class ReviewFlowTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void restoreAndShortcuts()
    {
        SteeringActions actions;
        FakeLoopControl loop(LoopControl::CanRevert | LoopControl::CanReview | LoopControl::CanSteerKernels);
        actions.setLoopControl(&loop);
        QCOMPARE(actions.revert()->text(), QStringLiteral("Restore This Version"));
        auto run = test::makeRun(QStringLiteral("/r"));
        const struct
        {
            int index;
            bool restorable;
        } cases[] = { { 0, true }, // baseline
            { 1, false }, // reverted
            { 3, false }, // failed
            { 4, true }, // kept
            { 5, false } }; // pending
        for (const auto &c : cases) {
            actions.setExperiment(run->experiments[c.index]);
            QVERIFY2(actions.revert()->isEnabled() == c.restorable,
                qPrintable(statusName(run->experiments[c.index].status)));
        }
        Experiment rejected = run->experiments[5];
        rejected.status = ExperimentStatus::Rejected;
        actions.setExperiment(rejected);
        QVERIFY(actions.revert()->isEnabled());
        QVERIFY2(actions.revert()->toolTip().contains(QStringLiteral("recorded as a new experiment")),
            qPrintable(actions.revert()->toolTip()));
        actions.revert()->trigger();
        QVERIFY(ak::test::answer("RestoreConfirmation", QMessageBox::Yes));
        QCOMPARE(loop.calls.last(), QStringLiteral("revert 02-softmax 6"));

        QCOMPARE(actions.accept()->shortcut(), QKeySequence(Qt::Key_A));
        QCOMPARE(actions.reject()->shortcut(), QKeySequence(Qt::Key_R));
        QCOMPARE(actions.pin()->shortcut(), QKeySequence(Qt::Key_P));
        QCOMPARE(actions.skip()->shortcut(), QKeySequence(Qt::Key_S));
        QVERIFY(actions.revert()->shortcut().isEmpty());
    }

    void nextPendingWalksAndWraps()
    {
        auto run = test::makeRun(QStringLiteral("/r")); // 6: pending on 02-softmax
        Experiment more
            = test::experiment(7, QStringLiteral("01-matmul"), ExperimentStatus::Pending, 1.2, 48);
        run->experiments.append(more);
        run->experimentIndex.insert(7, run->experiments.size() - 1);
        SteeringActions actions;
        RunWorkspace ws(&actions);
        ws.resize(1200, 800);
        ws.show();
        ws.setSnapshot(run);
        QVERIFY(ws.nextPendingAction()->isEnabled());
        QCOMPARE(ws.nextPendingAction()->shortcut(), QKeySequence(Qt::Key_N));

        const auto selected = [&ws] {
            return qMakePair(test::named<QTableView>(&ws, "KernelView")
                                 ->currentIndex()
                                 .data(KernelTableModel::KeyRole)
                                 .toString(),
                test::named<QTableView>(&ws, "CommitView")
                    ->currentIndex()
                    .data(ExperimentModel::IdRole)
                    .toInt());
        };
        ws.nextPendingAction()->trigger();
        QCOMPARE(selected(), qMakePair(QStringLiteral("02-softmax"), 6));
        ws.nextPendingAction()->trigger();
        QCOMPARE(selected(), qMakePair(QStringLiteral("01-matmul"), 7));
        ws.nextPendingAction()->trigger(); // wraps
        QCOMPARE(selected(), qMakePair(QStringLiteral("02-softmax"), 6));

        // A search that hides the pending experiment's kernel does not hide the experiment.
        auto *search = test::named<QLineEdit>(&ws, "KernelSearch");
        search->setText(QStringLiteral("layernorm"));
        ws.kernelProxy()->applySearchNow(); // not the 300 ms debounce
        QCOMPARE(ws.kernelProxy()->rowCount(), 1);
        QVERIFY(ws.selectExperiment(7));
        QCOMPARE(selected(), qMakePair(QStringLiteral("01-matmul"), 7));
        QVERIFY(search->text().isEmpty());

        // Show Pending Only: every kernel's pending experiments in the commit list, then back.
        ws.pendingOnlyAction()->setChecked(true);
        QCOMPARE(ws.experimentProxy()->rowCount(), 2);
        for (int r = 0; r < 2; ++r)
            QCOMPARE(ws.experimentProxy()->index(r, 0).data(ExperimentModel::StatusRole).toInt(),
                int(ExperimentStatus::Pending));
        ws.pendingOnlyAction()->setChecked(false);
        QCOMPARE(ws.experimentProxy()->rowCount(), 6); // the selected 01-matmul: experiments 1-5 and 7
        run = test::makeRun(QStringLiteral("/r"), false); // nothing pending
        ws.setSnapshot(run);
        QVERIFY(!ws.nextPendingAction()->isEnabled());
    }
};

AK_TEST_CLASS(ReviewFlowTest)
#include "tst_reviewflow.moc"
