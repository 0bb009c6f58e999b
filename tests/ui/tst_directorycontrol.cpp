// Steering a real run directory from the window: DirectoryControl applies a request directly when
// nobody writes the run and queues it when another process holds the lock; Loop ▸ Start swaps in the
// factory's loop and Stop hands steering back to the directory.
#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "models/kerneltablemodel.h"
#include "requestqueue.h"
#include "runloader.h"
#include "runlock.h"
#include "runstore.h"
#include "services/directorycontrol.h"
#include "services/loophost.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/logview.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPointer>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>

using namespace ak;

namespace {

// A run with "01-matmul" and "02-softmax".
const nlohmann::json kRunJson { { "model", "tiny.py" } };
const std::vector<test::TestKernel> kKernels { test::testKernel(1, QStringLiteral("matmul"), "BASE_MM = 1\n",
                                                   QStringLiteral("matmul"), 0.5),
    test::testKernel(2, QStringLiteral("softmax"), "BASE_SM = 1\n", QStringLiteral("softmax"), 0.25) };

KernelState stateOnDisk(const QString &dir, const QString &name)
{
    QString error;
    const RunSnapshotPtr s = RunLoader::load(dir, &error);
    const KernelRecord *k = s ? s->kernel(name) : nullptr;
    return k ? k->state : KernelState::Waiting;
}

void selectKernel(MainWindow &w, const QString &key)
{
    QTableView *view = test::named<QTableView>(&w, "KernelView");
    for (int r = 0; r < view->model()->rowCount(); ++r) {
        const QModelIndex idx = view->model()->index(r, 0);
        if (idx.data(KernelTableModel::KeyRole).toString() == key) {
            view->selectionModel()->setCurrentIndex(
                idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            return;
        }
    }
    QFAIL("kernel not in table");
}

} // namespace

class DirectoryControlTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void pinFromTheWindowIsWrittenToTheRun()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        auto *control = qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl());
        QVERIFY2(control, "an open run is steered through its directory by default");
        QCOMPARE(control->capabilities(),
            LoopControl::CanSteerKernels | LoopControl::CanRevert | LoopControl::CanReview
                | LoopControl::CanEditRules | LoopControl::CanSetReviewMode);
        QTRY_VERIFY(control->isWriterKnown());
        QCOMPARE(control->writerPid(), 0);

        selectKernel(w, QStringLiteral("01-matmul"));
        QVERIFY2(test::named<SteeringActions>(&w, "SteeringActions")->pin()->isEnabled(),
            qPrintable(test::named<SteeringActions>(&w, "SteeringActions")->pin()->toolTip()));
        QVERIFY(test::named<SteeringActions>(&w, "SteeringActions")
                    ->pin()
                    ->toolTip()
                    .contains(QStringLiteral("lock its current best")));
        QSignalSpy finished(control, &LoopControl::actionFinished);
        QSignalSpy failed(control, &LoopControl::actionFailed);
        test::named<SteeringActions>(&w, "SteeringActions")->pin()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 10000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
        QCOMPARE(finished.first().at(0).toString(), QStringLiteral("pin"));
        QCOMPARE(stateOnDisk(tmp.path(), QStringLiteral("01-matmul")), KernelState::Pinned);
        QVERIFY(!QFileInfo::exists(RunLock::lockPath(tmp.path()))); // the store was closed again
        // The window re-reads the run and the action shows the kernel pinned.
        QTRY_VERIFY_WITH_TIMEOUT(
            test::named<SteeringActions>(&w, "SteeringActions")->pin()->isChecked(), 10000);
        QVERIFY(
            test::named<LogView>(&w, "LogView")->toPlainText().contains(QStringLiteral("01-matmul pinned")));

        // A second pin is refused by the store, and the refusal reaches the log.
        control->pin(QStringLiteral("01-matmul"));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("already pinned")));
        QTRY_VERIFY(
            test::named<LogView>(&w, "LogView")->toPlainText().contains(QStringLiteral("already pinned")));
    }

    void requestIsQueuedWhileAnotherProcessWrites()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        // The fake writer: the run's lock held here, as a loop in another process would hold it.
        auto writer = std::make_unique<RunLock>(tmp.path());
        QString error;
        QVERIFY2(writer->acquire(&error), qPrintable(error));

        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        auto *control = qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl());
        QVERIFY(control);
        QTRY_COMPARE(control->writerPid(), QCoreApplication::applicationPid());
        selectKernel(w, QStringLiteral("02-softmax"));
        QSignalSpy finished(control, &LoopControl::actionFinished);
        test::named<SteeringActions>(&w, "SteeringActions")->skip()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QVERIFY(finished.first().at(1).toString().contains(QStringLiteral("queued for the writer")));
        const QStringList queued = QDir(RequestQueue::dir(tmp.path())).entryList(QDir::Files);
        QCOMPARE(queued.size(), 1);
        QCOMPARE(stateOnDisk(tmp.path(), QStringLiteral("02-softmax")), KernelState::Waiting);
        // Start is not offered while someone else writes the run (and never without a factory).
        QVERIFY(!test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled());

        // A second skip of the same kernel is queued too; the writer will refuse it.
        control->skip(QStringLiteral("02-softmax"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 10000);
        QCOMPARE(control->awaitedRequests(), 2);
        QSignalSpy failed(control, &LoopControl::actionFailed);

        // The writer applies queued requests when it next opens the run, and records each outcome.
        writer.reset();
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->state().kernel(QStringLiteral("02-softmax"))->state, KernelState::Skipped);
        QVERIFY(QDir(RequestQueue::dir(tmp.path())).entryList(QDir::Files).isEmpty());

        // The window hears both outcomes (after the reload the log change causes, or the writer poll):
        // the skip applied, the second refused, each in the log and the status bar.
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QCOMPARE(finished.at(2).at(0).toString(), QStringLiteral("skip"));
        QVERIFY2(finished.at(2).at(1).toString().contains(QStringLiteral("applied by the run's writer")),
            qPrintable(finished.at(2).at(1).toString()));
        QVERIFY(finished.at(2).at(1).toString().contains(QStringLiteral("02-softmax skipped")));
        QCOMPARE(failed.first().at(0).toString(), QStringLiteral("skip"));
        QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("already skipped")),
            qPrintable(failed.first().at(1).toString()));
        QCOMPARE(control->awaitedRequests(), 0);
        const QString log = test::named<LogView>(&w, "LogView")->toPlainText();
        QVERIFY2(
            log.contains(QStringLiteral("refused by the run's writer: kernel 02-softmax is already skipped")),
            qPrintable(log));
        QVERIFY(log.contains(QStringLiteral("applied by the run's writer: 02-softmax skipped")));
        // Each outcome is reported once: the records were consumed.
        QVERIFY(QDir(RequestQueue::doneDir(tmp.path())).entryList(QDir::Files).isEmpty());
        QTest::qWait(200);
        QCOMPARE(finished.count() + failed.count(), 4);
    }

    void failureOutsideARunIsReported()
    {
        QTemporaryDir tmp;
        DirectoryControl control(tmp.path());
        QSignalSpy failed(&control, &LoopControl::actionFailed);
        control.accept(3);
        control.start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 10000);
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("start")); // at once: no loop of its own
        QCOMPARE(failed.at(1).at(0).toString(), QStringLiteral("accept"));
        QVERIFY(!failed.at(1).at(1).toString().isEmpty());
    }

    void startNeedsAFactory()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        QTRY_VERIFY(qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl())
                        ->isWriterKnown());
        QVERIFY(!test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled());
        QVERIFY2(test::named<SteeringActions>(&w, "SteeringActions")
                     ->start()
                     ->toolTip()
                     .contains(QStringLiteral("no in-process loop")),
            qPrintable(test::named<SteeringActions>(&w, "SteeringActions")->start()->toolTip()));
    }

    void startAttachesTheFactoryLoopAndStopHandsBack()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        MainWindow w;
        QPointer<FakeLoopControl> made;
        QString madeFor;
        w.setLoopFactory([&made, &madeFor](const QString &runDir, QObject *parent) -> LoopControl * {
            madeFor = runDir;
            made = new FakeLoopControl(
                LoopControl::CanStartStop | LoopControl::CanPause | LoopControl::CanSteerKernels, parent);
            return made;
        });
        QVERIFY(test::openAndWait(w, tmp.path()));
        QTRY_VERIFY2(test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled(),
            qPrintable(test::named<SteeringActions>(&w, "SteeringActions")->start()->toolTip()));
        test::named<SteeringActions>(&w, "SteeringActions")->start()->trigger();
        QVERIFY(made);
        QCOMPARE(madeFor, QDir(tmp.path()).absolutePath());
        QCOMPARE(test::named<SteeringActions>(&w, "SteeringActions")->loopControl(), made.data());
        QCOMPARE(made->calls, QStringList { QStringLiteral("start") });
        made->setState(LoopControl::State::Running);
        QVERIFY(test::named<SteeringActions>(&w, "SteeringActions")->stop()->isEnabled());
        QVERIFY(test::named<SteeringActions>(&w, "SteeringActions")->pause()->isEnabled());
        test::named<SteeringActions>(&w, "SteeringActions")->stop()->trigger();
        QCOMPARE(made->calls.last(), QStringLiteral("stop"));
        made->setState(LoopControl::State::Stopping);
        QCOMPARE(test::named<SteeringActions>(&w, "SteeringActions")->loopControl(), made.data());
        made->setState(LoopControl::State::Stopped);
        // Stopped: the loop is dropped and the run directory steers again.
        QTRY_VERIFY(qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl()));
        QTRY_VERIFY(!made);
        QTRY_VERIFY(test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled());
    }

    void failedStartHandsBack()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        MainWindow w;
        w.setLoopFactory([](const QString &, QObject *parent) -> LoopControl * {
            auto *loop = new FakeLoopControl(LoopControl::CanStartStop, parent);
            // What LocalLoop::start does when it cannot take the run: report and stay Stopped.
            QObject::connect(loop, &FakeLoopControl::startCalled, loop, [loop] {
                Q_EMIT loop->actionFailed(QStringLiteral("start"), QStringLiteral("run is locked"));
            });
            return loop;
        });
        QVERIFY(test::openAndWait(w, tmp.path()));
        QTRY_VERIFY(test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled());
        test::named<SteeringActions>(&w, "SteeringActions")->start()->trigger();
        QTRY_VERIFY(qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl()));
        QVERIFY(test::named<LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("start: run is locked")));
    }

    // A CLI loop with --slurm holds the run: the summary names its job (for squeue / scancel), and
    // stops naming it once that loop has ended.
    void summaryNamesTheSlurmJobOfTheWriter()
    {
        QTemporaryDir tmp;
        nlohmann::json runJson = kRunJson;
        runJson["worker"] = { { "slurm", "--partition=gpu --gpus=2" }, { "slurm_job", 4242 } };
        QVERIFY(test::makeRunDir(tmp.path(), runJson, kKernels));
        auto writer = std::make_unique<RunLock>(tmp.path()); // the CLI's loop, as the window sees it
        QString error;
        QVERIFY2(writer->acquire(&error), qPrintable(error));

        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        QLabel *loop = test::named<QLabel>(&w, "SummaryLoop");
        QTRY_VERIFY2(loop->text().contains(QStringLiteral("Slurm job 4242")), qPrintable(loop->text()));
        QVERIFY2(loop->text().contains(
                     QStringLiteral("in another process (pid %1)").arg(QCoreApplication::applicationPid())),
            qPrintable(loop->text()));
        writer.reset(); // the loop ended, and its allocation with it
        QTRY_COMPARE_WITH_TIMEOUT(loop->text(), QStringLiteral("No loop running"), 10000);
    }
};

AK_TEST_CLASS(DirectoryControlTest)
#include "tst_directorycontrol.moc"
