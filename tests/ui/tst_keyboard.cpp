#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "models/kerneltablemodel.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/diffview.h"
#include "widgets/presentationview.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QMenu>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include <set>

using ak::LoopControl;
using ak::MainWindow;

namespace {

const LoopControl::Capabilities kAllCaps = LoopControl::CanStartStop | LoopControl::CanPause
    | LoopControl::CanSteerKernels | LoopControl::CanRevert | LoopControl::CanReview
    | LoopControl::CanEditRules | LoopControl::CanSetReviewMode;

// The top-level windows in which `action`'s shortcut can fire: Qt matches a window-context shortcut
// through the widgets the action is on, and for a menu through the widgets the menu is on.
std::set<const QWidget *> windowsOf(const QAction *action, int depth = 0)
{
    std::set<const QWidget *> windows;
    for (const QObject *o : action->associatedObjects()) {
        const auto *w = qobject_cast<const QWidget *>(o);
        if (!w)
            continue;
        if (const auto *menu = qobject_cast<const QMenu *>(w); menu && depth < 8) {
            const std::set<const QWidget *> up = windowsOf(menu->menuAction(), depth + 1);
            windows.insert(up.begin(), up.end());
        } else {
            windows.insert(w->window());
        }
    }
    return windows;
}

// Two enabled actions on one key whose contexts overlap: Qt then triggers neither and prints
// "Ambiguous shortcut overload". Returns each clash as "KEY: A / B".
QStringList ambiguousShortcuts(const QList<QAction *> &actions)
{
    QStringList clashes;
    for (int i = 0; i < actions.size(); ++i) {
        for (int j = i + 1; j < actions.size(); ++j) {
            const QAction *a = actions[i];
            const QAction *b = actions[j];
            if (a == b || !a->isEnabled() || !b->isEnabled())
                continue; // Qt skips a disabled action's shortcut
            const std::set<const QWidget *> wa = windowsOf(a);
            const std::set<const QWidget *> wb = windowsOf(b);
            bool overlap = a->shortcutContext() == Qt::ApplicationShortcut
                || b->shortcutContext() == Qt::ApplicationShortcut;
            for (const QWidget *w : wa)
                overlap = overlap || wb.count(w) > 0;
            if (!overlap)
                continue;
            for (const QKeySequence &ka : a->shortcuts())
                for (const QKeySequence &kb : b->shortcuts())
                    if (!ka.isEmpty() && ka == kb)
                        clashes << QStringLiteral("%1: %2 / %3")
                                       .arg(ka.toString(), a->text().remove(QLatin1Char('&')),
                                           b->text().remove(QLatin1Char('&')));
        }
    }
    return clashes;
}

// Every action of the window: its own, its menus', its parts', and those of the dialogs it made.
QList<QAction *> allActions(const QWidget &window)
{
    QList<QAction *> actions = window.findChildren<QAction *>();
    for (QWidget *w : window.findChildren<QWidget *>())
        for (QAction *a : w->actions())
            if (!actions.contains(a))
                actions << a;
    for (QWidget *top : QApplication::topLevelWidgets())
        if (qobject_cast<QDialog *>(top) && top->parentWidget() && top->parentWidget()->window() == &window)
            actions << top->findChildren<QAction *>();
    return actions;
}

void expectNoClash(const MainWindow &w, const char *state)
{
    const QStringList clashes = ambiguousShortcuts(allActions(w));
    QVERIFY2(clashes.isEmpty(),
        qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(state), clashes.join(", "))));
}

void selectRow(QTableView *view, int row)
{
    view->selectionModel()->setCurrentIndex(
        view->model()->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

bool hasFocusIn(const QWidget *w)
{
    const QWidget *focus = QApplication::focusWidget();
    return focus && (focus == w || w->isAncestorOf(focus));
}

} // namespace

class KeyboardTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void theAmbiguityCheckFindsAClash()
    {
        // The check itself: F5 on two window actions (what Reload and Presentation had) is a clash;
        // once one is disabled, or in another window, it is not.
        QWidget a;
        QWidget b;
        QAction one(QStringLiteral("One"));
        QAction two(QStringLiteral("Two"));
        one.setShortcut(Qt::Key_F5);
        two.setShortcut(Qt::Key_F5);
        a.addAction(&one);
        a.addAction(&two);
        QCOMPARE(ambiguousShortcuts({ &one, &two }).size(), 1);
        two.setEnabled(false);
        QVERIFY(ambiguousShortcuts({ &one, &two }).isEmpty());
        two.setEnabled(true);
        a.removeAction(&two);
        b.addAction(&two);
        QVERIFY(ambiguousShortcuts({ &one, &two }).isEmpty());
    }

    void noKeyIsBoundTwice()
    {
        // Every action of the window, in the states that enable different ones: no run; a run with a
        // pending experiment selected; a loop running; a loop paused.
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        expectNoClash(w, "no run");
        FakeLoopControl control(kAllCaps);
        w.setLoopControl(&control);
        w.setLoader(
            [](const QString &dir, QString *) -> ak::RunSnapshotPtr { return ak::test::makeRun(dir); });
        QVERIFY(ak::test::openAndWait(w, QStringLiteral("/runs/keys")));
        expectNoClash(w, "run open");
        QTableView *commits = ak::test::named<QTableView>(&w, "CommitView");
        for (int r = 0; r < commits->model()->rowCount(); ++r) {
            selectRow(commits, r);
            expectNoClash(w, "an experiment selected");
        }
        control.setState(ak::LoopControl::State::Running);
        expectNoClash(w, "loop running");
        control.setState(ak::LoopControl::State::Paused);
        expectNoClash(w, "loop paused");
    }

    void f5PresentsAndCtrlRReloads()
    {
        MainWindow w;
        int loads = 0;
        w.setLoader([&loads](const QString &dir, QString *) -> ak::RunSnapshotPtr {
            ++loads;
            return ak::test::makeRun(dir);
        });
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QVERIFY(ak::test::openAndWait(w, QStringLiteral("/runs/keys")));
        QCOMPARE(
            ak::test::named<QAction>(&w, "ReloadAction")->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_R));
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        QTest::keyClick(&w, Qt::Key_R, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 5000);
        QTest::keyClick(&w, Qt::Key_F5);
        auto *presentation = ak::test::topLevel<PresentationView>("PresentationView");
        QTRY_VERIFY_WITH_TIMEOUT(presentation->isVisible(), 3000);
        presentation->close();
    }

    void loopKeysAreShownAndWork()
    {
        MainWindow w;
        FakeLoopControl control(kAllCaps);
        w.setLoopControl(&control);
        w.setLoader(
            [](const QString &dir, QString *) -> ak::RunSnapshotPtr { return ak::test::makeRun(dir); });
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QVERIFY(ak::test::openAndWait(w, QStringLiteral("/runs/keys")));
        auto *steering = ak::test::named<ak::SteeringActions>(&w, "SteeringActions");
        QCOMPARE(steering->start()->shortcut(), QKeySequence(Qt::Key_F6));
        QCOMPARE(steering->stop()->shortcut(), QKeySequence(Qt::Key_F8));
        QCOMPARE(steering->reviewMode()->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V));
        QTest::keyClick(&w, Qt::Key_F6);
        QCOMPARE(control.calls.value(0), QStringLiteral("start"));
        control.setState(ak::LoopControl::State::Running);
        QTest::keyClick(&w, Qt::Key_F7);
        QCOMPARE(control.calls.value(1), QStringLiteral("pause"));
        control.setState(ak::LoopControl::State::Paused);
        QTest::keyClick(&w, Qt::Key_F7); // the same key resumes
        QCOMPARE(control.calls.value(2), QStringLiteral("resume"));
        control.setState(ak::LoopControl::State::Running);
        QTest::keyClick(&w, Qt::Key_F8);
        QCOMPARE(control.calls.value(3), QStringLiteral("stop"));
    }

    void tabGoesTableCommitsDiff()
    {
        MainWindow w;
        w.setLoader(
            [](const QString &dir, QString *) -> ak::RunSnapshotPtr { return ak::test::makeRun(dir); });
        w.setBlobReader([](const QString &, const QString &commit, const QString &, QString *) {
            return QStringLiteral("X = %1\n").arg(commit.left(4)).toUtf8();
        });
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QVERIFY(ak::test::openAndWait(w, QStringLiteral("/runs/keys")));
        auto *kernels = ak::test::named<QTableView>(&w, "KernelView");
        auto *commits = ak::test::named<QTableView>(&w, "CommitView");
        auto *diff = ak::test::named<ak::DiffView>(&w, "DiffView");
        selectRow(kernels, 0);
        selectRow(commits, 0);
        QTRY_VERIFY(diff->editor(1)->isVisible()); // the diff has loaded
        kernels->setFocus(Qt::OtherFocusReason);
        QTRY_VERIFY(kernels->hasFocus());
        // One Tab leaves the table, whatever its columns: not cell by cell.
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QTRY_VERIFY2(commits->hasFocus(), qPrintable(QApplication::focusWidget()->metaObject()->className()));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QTRY_VERIFY2(hasFocusIn(diff), qPrintable(QApplication::focusWidget()->metaObject()->className()));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab);
        QTRY_VERIFY(commits->hasFocus());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab);
        QTRY_VERIFY(kernels->hasFocus());
    }
};

AK_TEST_CLASS(KeyboardTest)
#include "tst_keyboard.moc"
