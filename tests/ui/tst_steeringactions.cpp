#include "answerdialog.h"
#include "fakeloopcontrol.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/steeringactions.h"

#include <QAction>

using ak::LoopControl;
using ak::SteeringActions;

class SteeringActionsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void disabledWithReasonWithoutLoop()
    {
        SteeringActions actions;
        actions.setKernel(QStringLiteral("01-matmul"), ak::KernelState::Active);
        for (QAction *a : actions.loopActions() + actions.selectionActions()) {
            QVERIFY2(!a->isEnabled(), qPrintable(a->text()));
            QVERIFY(a->toolTip().contains(QStringLiteral("No optimisation loop is attached")));
        }
    }

    void followsStateAndSelection()
    {
        FakeLoopControl loop(LoopControl::CanStartStop | LoopControl::CanPause | LoopControl::CanSteerKernels
            | LoopControl::CanRevert | LoopControl::CanReview);
        SteeringActions actions;
        actions.setLoopControl(&loop);
        QVERIFY(actions.start()->isEnabled());
        QVERIFY(!actions.pause()->isEnabled());
        QVERIFY(!actions.pin()->isEnabled());
        QVERIFY(actions.pin()->toolTip().contains(QStringLiteral("select a kernel")));
        loop.setState(LoopControl::State::Running);
        QVERIFY(!actions.start()->isEnabled());
        QVERIFY(actions.pause()->isEnabled());
        QVERIFY(actions.stop()->isEnabled());

        actions.setKernel(QStringLiteral("02-softmax"), ak::KernelState::Waiting);
        QVERIFY(actions.pin()->isEnabled());
        actions.pin()->trigger();
        actions.skip()->trigger();
        actions.setKernel(QStringLiteral("02-softmax"), ak::KernelState::Pinned);
        QVERIFY(actions.pin()->isChecked());
        actions.pin()->trigger(); // unchecks: unpin
        actions.setKernel(QStringLiteral("03-layernorm"), ak::KernelState::Done);
        QVERIFY(!actions.skip()->isEnabled());
        QVERIFY(actions.skip()->toolTip().contains(QStringLiteral("done")));

        auto run = ak::test::makeRun(QStringLiteral("/r"));
        actions.setExperiment(run->experiments[4]); // kept
        QVERIFY(actions.revert()->isEnabled());
        QVERIFY(!actions.accept()->isEnabled());
        actions.revert()->trigger();
        QVERIFY(loop.calls.size() == 3); // Restore asks first: Cancel does nothing, Restore restores
        QVERIFY(ak::test::answer("RestoreConfirmation", QMessageBox::Cancel));
        QCOMPARE(loop.calls.size(), 3);
        actions.revert()->trigger();
        QVERIFY(ak::test::answer("RestoreConfirmation", QMessageBox::Yes));
        actions.setExperiment(run->experiments[4], true); // now the head: nothing to restore
        QVERIFY(!actions.revert()->isEnabled());
        QVERIFY2(actions.revert()->toolTip().contains(QStringLiteral("already")),
            qPrintable(actions.revert()->toolTip()));
        actions.setExperiment(run->experiments[5]); // pending
        QVERIFY(!actions.revert()->isEnabled());
        QVERIFY(actions.accept()->isEnabled());
        actions.accept()->trigger();
        actions.reject()->trigger();
        QCOMPARE(loop.calls,
            (QStringList { QStringLiteral("pin 02-softmax"), QStringLiteral("skip 02-softmax"),
                QStringLiteral("unpin 02-softmax"), QStringLiteral("revert 01-matmul 5"),
                QStringLiteral("accept 6"), QStringLiteral("reject 6") }));
    }

    void missingCapabilityIsExplained()
    {
        FakeLoopControl replay(LoopControl::CanStartStop);
        SteeringActions actions;
        actions.setLoopControl(&replay);
        actions.setKernel(QStringLiteral("01-matmul"), ak::KernelState::Active);
        QVERIFY(!actions.pin()->isEnabled());
        QVERIFY(actions.pin()->toolTip().contains(QStringLiteral("not supported by fake loop")));
        QVERIFY(!actions.pause()->isEnabled());
    }

    void detachesWhenControlIsDestroyed()
    {
        SteeringActions actions;
        {
            FakeLoopControl loop(LoopControl::CanStartStop);
            actions.setLoopControl(&loop);
            QVERIFY(actions.start()->isEnabled());
        }
        QTRY_VERIFY(!actions.start()->isEnabled());
    }
};

AK_TEST_CLASS(SteeringActionsTest)
#include "tst_steeringactions.moc"
