#include "mainwindow.h"
#include "models/experimentmodel.h"
#include "models/kerneltablemodel.h"
#include "models/throughputchartmodel.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/devicestatus.h"
#include "widgets/diffview.h"
#include "widgets/emptystate.h"
#include "widgets/logview.h"
#include "widgets/steeringactions.h"
#include "widgets/throughputchart.h"

#include <QElapsedTimer>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QThread>
#include <QThreadPool>

#include <algorithm>
#include <atomic>

using ak::MainWindow;

namespace {

// Selects the kernel table row whose key is `key` (through the proxy).
void selectKernel(MainWindow &w, const QString &key)
{
    QTableView *view = ak::test::named<QTableView>(&w, "KernelView");
    for (int r = 0; r < view->model()->rowCount(); ++r) {
        const QModelIndex idx = view->model()->index(r, 0);
        if (idx.data(ak::KernelTableModel::KeyRole).toString() == key) {
            view->selectionModel()->setCurrentIndex(
                idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            return;
        }
    }
    QFAIL("kernel not in table");
}

} // namespace

class MainWindowTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void statusBarShowsDetectedDevice()
    {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY(ak::test::named<ak::DeviceStatus>(&w, "DeviceStatus")->isDetected());
        // No GPU on a test machine is a normal result; either way the label names what was found.
        const QString text = ak::test::named<ak::DeviceStatus>(&w, "DeviceStatus")->text();
        QVERIFY2(text.contains(QStringLiteral("GPU")) || text.contains(QStringLiteral("NVIDIA"))
                || text.contains(QStringLiteral("AMD")),
            qPrintable(text));
        QCOMPARE(w.statusBar()->findChildren<ak::DeviceStatus *>().size(), 1);
    }

    void emptyStateWithoutRun()
    {
        MainWindow w;
        QVERIFY(!w.isShowingRun());
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "NoRunState")
                    ->title()
                    .contains(QStringLiteral("No run open")));
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "NoRunState")
                    ->body()
                    .contains(QStringLiteral("File ▸ Open")));
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "NoRunState")
                    ->body()
                    .contains(QStringLiteral("autokernel-cli profile --model model.py --out RUN_DIR")));
        // The way in for one's own model, without the CLI.
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "NoRunState")
                    ->body()
                    .contains(QStringLiteral("File ▸ New Run…")));
    }

    void runWithoutExperiments()
    {
        MainWindow w;
        w.show();
        w.showSnapshot(ak::test::makeRun(QStringLiteral("/runs/fresh"), false));
        QVERIFY(w.isShowingRun());
        QVERIFY(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->isShowingKernels());
        QCOMPARE(ak::test::named<QTableView>(&w, "KernelView")->model()->rowCount(), 3);
        QVERIFY(!ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->isShowingCommits());
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "CommitEmptyState")
                    ->title()
                    .contains(QStringLiteral("No experiments yet")));
        QVERIFY(!ak::test::named<ak::ThroughputChart>(&w, "ThroughputChart")->isShowingChart());
        QVERIFY(
            ak::test::named<QLabel>(&w, "RunDeviceLabel")->text().contains(QStringLiteral("NVIDIA H200")));
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("fresh")));
    }

    void statusBarSaysWhereKernelsWereJudged()
    {
        MainWindow w;
        w.show();
        auto s = ak::test::makeRun(QStringLiteral("/runs/sandboxed"), true);
        auto *label = w.findChild<QLabel *>(QStringLiteral("SandboxLabel"));
        QVERIFY(label);
        w.showSnapshot(s);
        QVERIFY(label->isHidden()); // recorded before the judge had a sandbox
        s = ak::test::makeRun(QStringLiteral("/runs/sandboxed"), true);
        s->experiments.last().metrics.sandbox = QStringLiteral("bubblewrap");
        w.showSnapshot(s);
        QVERIFY(!label->isHidden());
        QCOMPARE(label->text(), QStringLiteral("Sandbox: bubblewrap"));
        s = ak::test::makeRun(QStringLiteral("/runs/sandboxed"), true);
        s->experiments.last().metrics.sandbox
            = QStringLiteral("process (bubblewrap (bwrap) is not installed)");
        w.showSnapshot(s);
        QVERIFY(label->text().contains(QStringLiteral("No sandbox")));
        QVERIFY(label->toolTip().contains(QStringLiteral("bwrap) is not installed")));
        QVERIFY(label->toolTip().contains(QStringLiteral("apt install bubblewrap")));
    }

    void runWithoutKernelsSaysHowToProfile()
    {
        MainWindow w;
        auto s = ak::test::makeRun(QStringLiteral("/runs/empty"), false);
        s->kernels.clear();
        s->kernelIndex.clear();
        w.showSnapshot(s);
        QVERIFY(!ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->isShowingKernels());
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "KernelEmptyState")
                    ->body()
                    .contains(QStringLiteral("autokernel-cli profile")));
    }

    void loadsOffTheGuiThread()
    {
        MainWindow w;
        QThread *loaderThread = nullptr;
        w.setLoader([&loaderThread](const QString &dir, QString *) -> ak::RunSnapshotPtr {
            loaderThread = QThread::currentThread();
            return ak::test::makeRun(dir);
        });
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(QStringLiteral("/runs/a"));
        // A load that finishes before the continuation is attached is delivered at once.
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 5000);
        QVERIFY(loaderThread && loaderThread != QThread::currentThread());
        QVERIFY(w.isShowingRun());
        QCOMPARE(w.windowFilePath(), QStringLiteral("/runs/a"));
    }

    void loadFailureIsReported()
    {
        MainWindow w;
        w.setLoader([](const QString &, QString *error) -> ak::RunSnapshotPtr {
            *error = QStringLiteral("run.json: no such file");
            return nullptr;
        });
        QSignalSpy failed(&w, &MainWindow::runLoadFailed);
        w.openRun(QStringLiteral("/runs/missing"));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 5000);
        QVERIFY(!w.isShowingRun());
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "NoRunState")
                    ->title()
                    .contains(QStringLiteral("Could not open")));
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "NoRunState")
                    ->body()
                    .contains(QStringLiteral("run.json: no such file")));
        QVERIFY(ak::test::named<ak::LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("run.json: no such file")));
    }

    void aSteadyStreamOfChangesStillReloads()
    {
        // A loop writing 25 changes a second for 1.2 s: the table follows while the stream lasts
        // (a restarting debounce showed nothing until it stopped), one load at a time, coalesced.
        MainWindow w;
        std::atomic<int> inFlight { 0 };
        std::atomic<int> maxInFlight { 0 };
        std::atomic<int> loads { 0 };
        w.setLoader([&](const QString &dir, QString *) -> ak::RunSnapshotPtr {
            const int now = ++inFlight;
            maxInFlight = std::max(maxInFlight.load(), now);
            ++loads;
            QThread::msleep(120);
            --inFlight;
            return ak::test::makeRun(dir);
        });
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(QStringLiteral("/runs/live"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 5000);
        QElapsedTimer stream;
        stream.start();
        int reloadedDuringStream = 0;
        while (stream.elapsed() < 1200) {
            w.scheduleReload();
            QTest::qWait(40);
            reloadedDuringStream = int(loaded.count()) - 1;
        }
        QVERIFY2(reloadedDuringStream >= 2, qPrintable(QString::number(reloadedDuringStream)));
        QTRY_VERIFY_WITH_TIMEOUT(inFlight.load() == 0, 5000);
        QTest::qWait(500); // the last change after the stream is read too, then nothing more
        const int settled = loads.load();
        QTest::qWait(400);
        QCOMPARE(loads.load(), settled);
        QCOMPARE(maxInFlight.load(), 1);
        QVERIFY2(
            settled <= 1 + 1200 / 250 + 3, qPrintable(QString::number(settled))); // coalesced, not 30 loads
    }

    void actionsFollowTheSelectedExperimentAcrossReloads()
    {
        // Accept on a pending experiment; the loop applies it; the next reload shows it kept: Accept and
        // Reject must turn off then, not only when another row is selected (issue #14).
        MainWindow w;
        std::atomic<bool> accepted { false };
        w.setLoader([&accepted](const QString &dir, QString *) -> ak::RunSnapshotPtr {
            auto s = ak::test::makeRun(dir);
            if (accepted)
                s->experiments[5].status = ak::ExperimentStatus::Kept; // experiment 6, 02-softmax
            return s;
        });
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(QStringLiteral("/runs/review"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 5000);
        selectKernel(w, QStringLiteral("02-softmax"));
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        QCOMPARE(commits->model()->rowCount(), 1);
        commits->selectionModel()->setCurrentIndex(
            commits->model()->index(0, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QVERIFY(ak::test::named<ak::SteeringActions>(&w, "SteeringActions")->accept()->isEnabled());
        QVERIFY(ak::test::named<ak::SteeringActions>(&w, "SteeringActions")->reject()->isEnabled());
        accepted = true;
        w.reload();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, 5000);
        QVERIFY(!ak::test::named<ak::SteeringActions>(&w, "SteeringActions")->accept()->isEnabled());
        QVERIFY(!ak::test::named<ak::SteeringActions>(&w, "SteeringActions")->reject()->isEnabled());
    }

    void actionsFollowOutcomeAndKernelStateAcrossReloads()
    {
        // Issue #14, the rest of the review flow: reloads that change the selected experiment's outcome
        // (keep -> revert, pending -> reject) or the selected kernel's state (pinned, done) must change
        // the actions with them, without another row being selected.
        MainWindow w;
        std::atomic<int> stage { 0 };
        w.setLoader([&stage](const QString &dir, QString *) -> ak::RunSnapshotPtr {
            auto s = ak::test::makeRun(dir);
            const int now = stage;
            if (now >= 1)
                s->experiments[4].status = ak::ExperimentStatus::Reverted; // experiment 5 restored away
            if (now == 1)
                s->kernels[0].state = ak::KernelState::Pinned;
            if (now >= 2)
                s->kernels[0].state = ak::KernelState::Done;
            if (now >= 3)
                s->experiments[5].status = ak::ExperimentStatus::Rejected; // experiment 6, 02-softmax
            return s;
        });
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(QStringLiteral("/runs/outcomes"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 5000);
        auto *steering = ak::test::named<ak::SteeringActions>(&w, "SteeringActions");
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        auto selectCommit = [commits](int id) {
            for (int r = 0; r < commits->model()->rowCount(); ++r) {
                const QModelIndex idx = commits->model()->index(r, 0);
                if (idx.data(ak::ExperimentModel::IdRole).toInt() == id) {
                    commits->selectionModel()->setCurrentIndex(
                        idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
                    return true;
                }
            }
            return false;
        };
        auto reloadAt = [&](int next) {
            stage = next;
            w.reload();
            QTRY_COMPARE_WITH_TIMEOUT(int(loaded.count()), next + 1, 5000);
        };

        selectKernel(w, QStringLiteral("01-matmul"));
        QVERIFY(selectCommit(5)); // kept
        QVERIFY(steering->revert()->isEnabled());
        QVERIFY(!steering->accept()->isEnabled());
        QVERIFY(steering->pin()->isEnabled() && !steering->pin()->isChecked());
        QVERIFY(steering->skip()->isEnabled());

        // keep -> revert, and the kernel pinned: Restore turns off; Pin shows pinned and offers unpin.
        reloadAt(1);
        QVERIFY(!steering->revert()->isEnabled());
        QVERIFY(steering->revert()->toolTip().contains(QStringLiteral("not kept")));
        QVERIFY(steering->pin()->isChecked());
        QVERIFY(steering->pin()->isEnabled());
        QVERIFY(steering->skip()->isEnabled());

        // The kernel done: neither pin nor skip applies any more.
        reloadAt(2);
        QVERIFY(!steering->pin()->isChecked());
        QVERIFY(!steering->pin()->isEnabled());
        QVERIFY(!steering->skip()->isEnabled());
        QVERIFY(steering->skip()->toolTip().contains(QStringLiteral("done")));

        // pending -> reject on another kernel: Accept and Reject off, Restore on (a rejected version
        // can be restored).
        selectKernel(w, QStringLiteral("02-softmax"));
        QVERIFY(selectCommit(6));
        QVERIFY(steering->accept()->isEnabled() && steering->reject()->isEnabled());
        QVERIFY(!steering->revert()->isEnabled());
        reloadAt(3);
        QVERIFY(!steering->accept()->isEnabled());
        QVERIFY(!steering->reject()->isEnabled());
        QVERIFY(steering->reject()->toolTip().contains(QStringLiteral("not pending")));
        QVERIFY(steering->revert()->isEnabled());
    }

    void experimentsAndStateColumnsInViewAt1600Px()
    {
        // Issue #14: as the last two of 16 columns, Experiments and State were off-screen in a 1600 px
        // window; they are what changes while a run is watched.
        QSettings().remove(QStringLiteral("mainWindow")); // saved column widths would skip the fitting
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.width(), 1600);
        auto s = ak::test::makeRun(QStringLiteral("/runs/wide"));
        // A real run's C++ template symbol and shapes, so the fitted columns are as wide as they get.
        s->kernels[0].name = QStringLiteral("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_"
                                            "bf16_32x32_128x2_tn_align8>(Params)");
        s->kernels[0].shapes = { QStringLiteral("[8, 1024, 4096]"), QStringLiteral("[4096, 11008]"),
            QStringLiteral("[8, 1024, 11008]") };
        w.showSnapshot(s);
        QTableView *view = ak::test::named<QTableView>(&w, "KernelView");
        QTest::qWait(50); // the columns are fitted to the new run once the view is current
        QVERIFY(view->isVisible());
        // Fitted to the readable name (op · where · shape; the long symbol is in the tooltip), not the
        // default.
        const QString shown = view->model()->index(0, ak::KernelTableModel::KernelColumn).data().toString();
        QVERIFY2(view->columnWidth(ak::KernelTableModel::KernelColumn)
                >= view->fontMetrics().horizontalAdvance(shown),
            qPrintable(shown));
        const int viewport = view->viewport()->width();
        for (int column :
            { int(ak::KernelTableModel::ExperimentsColumn), int(ak::KernelTableModel::StateColumn) }) {
            const int left = view->columnViewportPosition(column);
            const int right = left + view->columnWidth(column);
            QVERIFY2(left >= 0 && right <= viewport,
                qPrintable(QStringLiteral("column %1 at %2..%3 px, viewport %4 px")
                               .arg(view->model()->headerData(column, Qt::Horizontal).toString())
                               .arg(left)
                               .arg(right)
                               .arg(viewport)));
        }
    }

    void staleLoadIsDropped()
    {
        MainWindow w;
        w.setLoader([](const QString &dir, QString *) -> ak::RunSnapshotPtr {
            if (dir.endsWith(QLatin1String("slow")))
                QThread::msleep(400);
            return ak::test::makeRun(dir);
        });
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(QStringLiteral("/runs/slow"));
        w.openRun(QStringLiteral("/runs/fast"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 5000);
        QTest::qWait(600);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(w.windowFilePath(), QStringLiteral("/runs/fast"));
    }

    void closingWhileLoadingIsSafe()
    {
        // The result arrives after the window is gone: it must be dropped, not delivered to a dead object.
        auto *w = new MainWindow;
        w->setLoader([](const QString &dir, QString *) -> ak::RunSnapshotPtr {
            QThread::msleep(300);
            return ak::test::makeRun(dir);
        });
        w->openRun(QStringLiteral("/runs/closing"));
        delete w;
        QTest::qWait(500);
        QThreadPool::globalInstance()->waitForDone(2000);
    }

    void kernelSelectionDrivesCommitsAndChart()
    {
        MainWindow w;
        w.show();
        w.showSnapshot(ak::test::makeRun(QStringLiteral("/runs/b")));
        QCOMPARE(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->experimentProxy()->rowCount(),
            6); // no selection: every commit
        selectKernel(w, QStringLiteral("01-matmul"));
        QCOMPARE(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->experimentProxy()->rowCount(), 5);
        QVERIFY(ak::test::named<ak::ThroughputChart>(&w, "ThroughputChart")->isShowingChart());
        selectKernel(w, QStringLiteral("03-layernorm"));
        QVERIFY(!ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->isShowingCommits());
        QVERIFY(ak::test::named<ak::EmptyState>(&w, "CommitEmptyState")
                    ->title()
                    .contains(QStringLiteral("03-layernorm")));
        QVERIFY(!ak::test::named<ak::ThroughputChart>(&w, "ThroughputChart")->isShowingChart());
    }

    void liveUpdateKeepsSelection()
    {
        MainWindow w;
        auto s = ak::test::makeRun(QStringLiteral("/runs/live"));
        w.showSnapshot(s);
        selectKernel(w, QStringLiteral("01-matmul"));
        auto next = std::make_shared<ak::RunSnapshot>(*s);
        next->experiments.append(
            ak::test::experiment(7, QStringLiteral("01-matmul"), ak::ExperimentStatus::Kept, 1.8, 71.0));
        next->experimentIndex.insert(7, int(next->experiments.size()) - 1);
        QSignalSpy resets(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->kernelModel(),
            &QAbstractItemModel::modelReset);
        w.showSnapshot(next);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->selectedKernel(),
            QStringLiteral("01-matmul"));
        QCOMPARE(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->experimentProxy()->rowCount(), 6);
        QCOMPARE(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->chartModel()->rowCount(), 5);
    }

    void arrivingExperimentsDoNotMoveTheCommitList()
    {
        // Issue #14: newest first, experiments that arrived went in above the rows being read and pushed
        // them down under the mouse. Scrolled away from the top, the top row stays; at the top, the
        // newest rows show.
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto append = [](ak::RunSnapshot &run, int count) {
            for (int i = 0; i < count; ++i) {
                const int id = run.experiments.last().id + 1;
                run.experiments.append(ak::test::experiment(
                    id, QStringLiteral("01-matmul"), ak::ExperimentStatus::Reverted, 0.9, 36.0));
                run.experimentIndex.insert(id, int(run.experiments.size()) - 1);
            }
        };
        auto s = ak::test::makeRun(QStringLiteral("/runs/arriving"));
        append(*s, 80); // experiments 7..86
        w.showSnapshot(s);
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        auto topId
            = [commits] { return commits->indexAt(QPoint(0, 0)).data(ak::ExperimentModel::IdRole).toInt(); };
        QCOMPARE(topId(), 86);
        auto next = std::make_shared<ak::RunSnapshot>(*s);
        append(*next, 3);
        w.showSnapshot(next);
        QCOMPARE(topId(), 89); // at the top: the newest show as they arrive

        int row50 = -1;
        for (int r = 0; r < commits->model()->rowCount() && row50 < 0; ++r)
            if (commits->model()->index(r, 0).data(ak::ExperimentModel::IdRole).toInt() == 50)
                row50 = r;
        commits->scrollTo(commits->model()->index(row50, 0), QAbstractItemView::PositionAtTop);
        QCOMPARE(topId(), 50);
        QVERIFY(commits->verticalScrollBar()->value() > 0);
        const int horizontal = commits->horizontalScrollBar()->value();
        auto more = std::make_shared<ak::RunSnapshot>(*next);
        append(*more, 10);
        w.showSnapshot(more);
        QCOMPARE(commits->model()->rowCount(), 99);
        QCOMPARE(topId(), 50);
        QCOMPARE(commits->horizontalScrollBar()->value(), horizontal);
    }

    void commitSelectionShowsDiff()
    {
        MainWindow w;
        w.show();
        QStringList reads;
        w.setBlobReader([&reads](const QString &, const QString &commit, const QString &path, QString *) {
            reads << path;
            return commit.endsWith(QLatin1Char('5')) ? QByteArray("BLOCK = 128\nWARPS = 8\n")
                                                     : QByteArray("BLOCK = 64\n");
        });
        w.showSnapshot(ak::test::makeRun(QStringLiteral("/runs/c")));
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        const int row = ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")
                            ->experimentProxy()
                            ->mapFromSource(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")
                                                ->experimentModel()
                                                ->index(ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")
                                                            ->experimentModel()
                                                            ->rowOfId(5),
                                                    0))
                            .row();
        QSignalSpy shown(ak::test::named<ak::DiffView>(&w, "DiffView"), &ak::DiffView::diffShown);
        commits->selectionModel()->setCurrentIndex(
            commits->model()->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 5000);
        QVERIFY(reads.contains(QStringLiteral("kernels/01-matmul/kernel.py")));
        QCOMPARE(ak::test::named<ak::DiffView>(&w, "DiffView")->editor(1)->toPlainText(),
            QStringLiteral("BLOCK = 128\nWARPS = 8"));
        QCOMPARE(
            ak::test::named<ak::DiffView>(&w, "DiffView")->editor(0)->document()->blockCount(), 2); // padded
    }
};

AK_TEST_CLASS(MainWindowTest)
#include "tst_mainwindow.moc"
