// The diff follows the window's selection: RunWorkspace::loadDiff driven through the real MainWindow.
#include "diffview.h"
#include "emptystate.h"
#include "experimentmodel.h"
#include "kerneltablemodel.h"
#include "mainwindow.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"

#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>

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

} // namespace

class WorkspaceDiffTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void kernelChangeDropsThePreviousKernelsCommit()
    {
        ak::MainWindow w;
        w.show();
        w.setBlobReader([](const QString &, const QString &commit, const QString &, QString *) {
            return QStringLiteral("BLOCK = %1\n").arg(commit.right(1)).toUtf8();
        });
        w.showSnapshot(ak::test::makeRun(QStringLiteral("/runs/k")));
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
};

AK_TEST_CLASS(WorkspaceDiffTest)
#include "tst_workspacediff.moc"
