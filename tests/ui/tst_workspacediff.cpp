// The diff follows the window's selection: ExperimentDetails::showExperiment, driven by RunWorkspace through
// the real MainWindow.
#include "mainwindow.h"
#include "models/experimentmodel.h"
#include "models/kerneltablemodel.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/diffview.h"
#include "widgets/emptystate.h"

#include "runstore.h"

#include <QAction>
#include <QItemSelectionModel>
#include <QPlainTextEdit>
#include <QSemaphore>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>

namespace {

void select(QTableView *view, int role, const QVariant &value)
{
    for (int r = 0; r < view->model()->rowCount(); ++r) {
        const QModelIndex idx = view->model()->index(r, 0);
        if (idx.data(role) == value) {
            view->selectionModel()->setCurrentIndex(
                idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            return;
        }
    }
    QFAIL("row not in table");
}

// The in-memory run of testsnapshot.h on screen, each commit's kernel.py "BLOCK = <its last digit>".
void showMadeRun(ak::MainWindow &w)
{
    w.show();
    w.setBlobReader([](const QString &, const QString &commit, const QString &, QString *) {
        return QStringLiteral("BLOCK = %1\n").arg(commit.right(1)).toUtf8();
    });
    w.showSnapshot(ak::test::makeRun(QStringLiteral("/runs/k")));
}

} // namespace

class WorkspaceDiffTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void kernelChangeDropsThePreviousKernelsCommit()
    {
        ak::MainWindow w;
        showMadeRun(w);
        ak::DiffView *diff = ak::test::named<ak::DiffView>(&w, "DiffView");
        QTableView *kernels = ak::test::named<QTableView>(&w, "KernelView");
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        select(kernels, ak::KernelTableModel::KeyRole, QStringLiteral("01-matmul"));
        QSignalSpy shown(diff, &ak::DiffView::diffShown);
        select(commits, ak::ExperimentModel::IdRole, 5);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 5000);
        QVERIFY(diff->title(1).contains(QStringLiteral("experiment 5")));

        // Another kernel: experiment 5 leaves the commit list, so it must leave the diff too.
        select(kernels, ak::KernelTableModel::KeyRole, QStringLiteral("02-softmax"));
        QTest::qWait(200); // a diff still loading would arrive by now
        const QModelIndex current = commits->selectionModel()->currentIndex();
        if (current.isValid()) {
            // The list's current row moved to one of this kernel's commits: the diff is that one's.
            const int id = current.data(ak::ExperimentModel::IdRole).toInt();
            QTRY_VERIFY_WITH_TIMEOUT(
                diff->isShowingDiff() && diff->title(1).contains(QStringLiteral("experiment %1").arg(id)),
                5000);
        } else {
            QVERIFY(!diff->isShowingDiff());
            QVERIFY(ak::test::named<ak::EmptyState>(diff, "DiffEmptyState")
                        ->title()
                        .contains(QStringLiteral("No commit selected")));
        }
        QVERIFY(!(diff->isShowingDiff() && diff->title(1).contains(QStringLiteral("experiment 5"))));

        // Back on the first kernel, choosing its commit shows it again.
        select(kernels, ak::KernelTableModel::KeyRole, QStringLiteral("01-matmul"));
        const int before = shown.count();
        select(commits, ak::ExperimentModel::IdRole, 5);
        QTRY_VERIFY_WITH_TIMEOUT(
            shown.count() > before || diff->title(1).contains(QStringLiteral("experiment 5")), 5000);
        QVERIFY(diff->title(1).contains(QStringLiteral("experiment 5")));
    }

    // Another run shown while a diff of the first is still being read: the late read must not land
    // over the new run's "No commit selected".
    void newRunDropsADiffStillLoading()
    {
        QSemaphore gate; // before the window: they outlive it and its reads
        QAtomicInt reads;
        ak::MainWindow w;
        w.show();
        w.setBlobReader([&gate, &reads](const QString &, const QString &commit, const QString &, QString *) {
            reads.ref();
            gate.acquire(); // held until the other run is on screen
            gate.release();
            return QStringLiteral("BLOCK = %1\n").arg(commit.right(1)).toUtf8();
        });
        w.showSnapshot(ak::test::makeRun(QStringLiteral("/runs/k")));
        ak::DiffView *diff = ak::test::named<ak::DiffView>(&w, "DiffView");
        select(ak::test::named<QTableView>(&w, "KernelView"), ak::KernelTableModel::KeyRole,
            QStringLiteral("01-matmul"));
        select(ak::test::named<QTableView>(&w, "CommitView"), ak::ExperimentModel::IdRole, 5);
        QTRY_VERIFY_WITH_TIMEOUT(reads.loadRelaxed() > 0, 5000); // the read is under way, blocked
        w.showSnapshot(ak::test::makeRun(QStringLiteral("/runs/other")));
        gate.release(); // the old read finishes now
        QTest::qWait(300);
        QVERIFY(!(diff->isShowingDiff() && diff->title(1).contains(QStringLiteral("experiment 5"))));
        QVERIFY(ak::test::named<ak::EmptyState>(diff, "DiffEmptyState")
                    ->title()
                    .contains(QStringLiteral("No commit selected")));
    }

    // Baseline against best (View ▸ Compare Baseline with Best), and any two experiments chosen in
    // the commit list, older on the left.
    void comparesTwoExperiments()
    {
        ak::MainWindow w;
        showMadeRun(w);
        ak::DiffView *diff = ak::test::named<ak::DiffView>(&w, "DiffView");
        QTableView *kernels = ak::test::named<QTableView>(&w, "KernelView");
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        select(kernels, ak::KernelTableModel::KeyRole, QStringLiteral("01-matmul"));
        QSignalSpy shown(diff, &ak::DiffView::diffShown);
        ak::test::named<QAction>(&w, "CompareBaselineBestAction")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 5000);
        QVERIFY2(
            diff->title(0).startsWith(QStringLiteral("experiment 1 (baseline)")), qPrintable(diff->title(0)));
        QVERIFY2(
            diff->title(1).startsWith(QStringLiteral("experiment 5 (kept)")), qPrintable(diff->title(1)));

        // Ctrl+click: experiments 4 and 2, compared as 2 -> 4 whatever the order of the clicks.
        select(commits, ak::ExperimentModel::IdRole, 4);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 5000);
        for (int r = 0; r < commits->model()->rowCount(); ++r) {
            const QModelIndex idx = commits->model()->index(r, 0);
            if (idx.data(ak::ExperimentModel::IdRole).toInt() == 2)
                commits->selectionModel()->select(
                    idx, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 3, 5000);
        QVERIFY2(diff->title(0).startsWith(QStringLiteral("experiment 2 (")), qPrintable(diff->title(0)));
        QVERIFY2(diff->title(1).startsWith(QStringLiteral("experiment 4 (")), qPrintable(diff->title(1)));

        // Back to one experiment: its own change again.
        select(commits, ak::ExperimentModel::IdRole, 3);
        QTRY_VERIFY_WITH_TIMEOUT(diff->title(1).contains(QStringLiteral("experiment 3 @")), 5000);
    }

    // Beside the diff, the agent's raw reply as the run kept it; an experiment without one says so.
    void agentReplyBesideTheDiff()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(QStringLiteral("run"));
        QVERIFY(ak::test::makeRunDir(dir));
        int withReply = 0, without = 0;
        QString kernel;
        {
            QString error;
            auto store = ak::RunStore::open(dir, &error);
            QVERIFY2(store, qPrintable(error));
            kernel = store->state().kernels.first().key();
            withReply = store
                            ->beginExperiment(
                                kernel, "A = 1\n", QStringLiteral("llm:m"), QStringLiteral("a"), &error)
                            .id;
            QVERIFY(store->attachReply(
                withReply, QStringLiteral("Because tiles.\n```python\nA = 1\n```"), &error));
            QVERIFY(store->finishExperiment(
                withReply, ak::ExperimentStatus::Reverted, ak::Metrics(), QString(), &error));
            without = store
                          ->beginExperiment(
                              kernel, "A = 2\n", QStringLiteral("tune"), QStringLiteral("b"), &error)
                          .id;
            QVERIFY(store->finishExperiment(
                without, ak::ExperimentStatus::Reverted, ak::Metrics(), QString(), &error));
        }
        ak::MainWindow w;
        w.show();
        QVERIFY(ak::test::openAndWait(w, dir));
        auto *reply = ak::test::named<QPlainTextEdit>(&w, "AgentReplyView");
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        select(ak::test::named<QTableView>(&w, "KernelView"), ak::KernelTableModel::KeyRole, kernel);
        select(commits, ak::ExperimentModel::IdRole, withReply);
        QTRY_COMPARE_WITH_TIMEOUT(
            reply->toPlainText(), QStringLiteral("Because tiles.\n```python\nA = 1\n```"), 5000);
        select(commits, ak::ExperimentModel::IdRole, without);
        QTRY_VERIFY_WITH_TIMEOUT(reply->toPlainText().isEmpty(), 5000);
        QVERIFY(reply->placeholderText().contains(
            QStringLiteral("No reply kept for experiment %1").arg(without)));
    }
};

AK_TEST_CLASS(WorkspaceDiffTest)
#include "tst_workspacediff.moc"
