// Loop ▸ Move-on Rules…: the dialog is prefilled from the open run's run.json, OK changes run.json on
// disk through the window's DirectoryControl (or queues the change for the run's writer), bad values
// keep it open with the field named, and a control that cannot change rules makes it read-only.
#include "dialogs/moveonrulesdialog.h"
#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "requestqueue.h"
#include "runconfig.h"
#include "runloader.h"
#include "runlock.h"
#include "runstore.h"
#include "services/directorycontrol.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/logview.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>

using namespace ak;

namespace {

// A run whose run.json sets two of the four rules.
const nlohmann::json kRunJson { { "model", "tiny.py" },
    { "move_on", { { "max_consecutive_reverts", 7 }, { "roof_pct", 80 } } } };

MoveOnRules rulesOnDisk(const QString &dir)
{
    QFile f(QDir(dir).filePath(QStringLiteral("run.json")));
    RunConfig c;
    if (!f.open(QIODevice::ReadOnly) || !RunConfig::parse(f.readAll(), &c) || !c.moveOnWarning.isEmpty())
        qWarning("run.json unreadable");
    return c.moveOn;
}

} // namespace

class MoveOnRulesDialogTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void prefilledAndOkWritesRunJson()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        MainWindow w;
        QVERIFY(!test::named<QAction>(&w, "MoveOnRulesAction")->isEnabled()); // no run yet
        QVERIFY(test::openAndWait(w, tmp.path()));
        auto *control = qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl());
        QVERIFY(control);
        QVERIFY(control->capabilities().testFlag(LoopControl::CanEditRules));
        QTRY_VERIFY(control->isWriterKnown());

        // The status bar shows the rules.
        QVERIFY2(test::named<QLabel>(&w, "MoveOnRulesLabel")->text().contains(QStringLiteral("7 reverts")),
            qPrintable(test::named<QLabel>(&w, "MoveOnRulesLabel")->text()));
        QVERIFY(test::named<QLabel>(&w, "MoveOnRulesLabel")->text().contains(QStringLiteral("80% roof")));
        QVERIFY(test::named<QLabel>(&w, "MoveOnRulesLabel")
                    ->toolTip()
                    .contains(
                        QStringLiteral("7 reverts in a row, 80% of roof, 2x over baseline, 2 h per kernel")));

        QVERIFY(test::named<QAction>(&w, "MoveOnRulesAction")->isEnabled());
        test::named<QAction>(&w, "MoveOnRulesAction")->trigger();
        QPointer<MoveOnRulesDialog> dialog = test::named<MoveOnRulesDialog>(&w, "MoveOnRulesDialog");
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(dialog->isEditable());
        QCOMPARE(dialog->revertsBox()->value(), 7);
        QCOMPARE(dialog->roofBox()->value(), 80.0);
        QCOMPARE(dialog->hoursBox()->value(), 2.0); // defaults where run.json says nothing
        QCOMPARE(dialog->speedupBox()->value(), 2.0);
        QVERIFY(dialog->currentText().contains(QStringLiteral("Never changed")));

        dialog->revertsBox()->setValue(3);
        dialog->speedupBox()->setValue(0);
        QCOMPARE(dialog->speedupBox()->text(), QStringLiteral("off"));
        QCOMPARE(dialog->inModelMissesBox()->value(), 2); // #38 item 5's rule, its default
        dialog->inModelMissesBox()->setValue(4);
        QSignalSpy finished(control, &LoopControl::actionFinished);
        QSignalSpy failed(control, &LoopControl::actionFailed);
        dialog->buttons()->button(QDialogButtonBox::Ok)->click();
        QTRY_VERIFY(!dialog); // closed (and deleted)
        QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 10000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
        QCOMPARE(finished.first().at(0).toString(), QStringLiteral("setMoveOnRules"));
        QVERIFY(!QFileInfo::exists(RunLock::lockPath(tmp.path()))); // applied directly, store closed again

        MoveOnRules expected;
        expected.maxConsecutiveReverts = 3;
        expected.roofPct = 80;
        expected.speedupOverBaseline = 0;
        expected.maxInModelMisses = 4;
        QCOMPARE(rulesOnDisk(tmp.path()), expected);

        // The window re-reads the run: the status bar, the log and the next dialog follow.
        QTRY_VERIFY_WITH_TIMEOUT(
            test::named<QLabel>(&w, "MoveOnRulesLabel")->text().contains(QStringLiteral("3 reverts")), 10000);
        QVERIFY(
            test::named<QLabel>(&w, "MoveOnRulesLabel")->text().contains(QStringLiteral("no speedup goal")));
        QVERIFY(
            test::named<QLabel>(&w, "MoveOnRulesLabel")->toolTip().contains(QStringLiteral("Last changed")));
        QTRY_VERIFY(test::named<LogView>(&w, "LogView")
                        ->toPlainText()
                        .contains(QStringLiteral("move-on rules changed")));
        QVERIFY(test::named<LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("move-on rules set: 3 reverts in a row")));
        test::named<QAction>(&w, "MoveOnRulesAction")->trigger();
        dialog = test::named<MoveOnRulesDialog>(&w, "MoveOnRulesDialog");
        QVERIFY(dialog);
        QCOMPARE(dialog->revertsBox()->value(), 3);
        QCOMPARE(dialog->speedupBox()->value(), 0.0);
        QCOMPARE(dialog->inModelMissesBox()->value(), 4);
        QVERIFY2(dialog->currentText().contains(QStringLiteral("Changed once")),
            qPrintable(dialog->currentText()));
        dialog->reject();
        QTRY_VERIFY(!dialog);
    }

    void badValueKeepsTheDialogOpen()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        test::named<QAction>(&w, "MoveOnRulesAction")->trigger();
        QPointer<MoveOnRulesDialog> dialog = test::named<MoveOnRulesDialog>(&w, "MoveOnRulesDialog");
        QVERIFY(dialog);
        dialog->roofBox()->setValue(0.5); // a fraction, not a percentage
        dialog->buttons()->button(QDialogButtonBox::Ok)->click();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY2(dialog->errorText().contains(QStringLiteral("roof_pct")), qPrintable(dialog->errorText()));
        QCOMPARE(rulesOnDisk(tmp.path()).roofPct, 80.0);
        // Restore Defaults, then OK: accepted.
        dialog->buttons()->button(QDialogButtonBox::RestoreDefaults)->click();
        QCOMPARE(dialog->rules(), MoveOnRules());
        dialog->buttons()->button(QDialogButtonBox::Ok)->click();
        QTRY_VERIFY(!dialog);
        QTRY_COMPARE_WITH_TIMEOUT(rulesOnDisk(tmp.path()), MoveOnRules(), 10000);
    }

    void queuedWhileAnotherProcessWrites()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        auto writer = std::make_unique<RunLock>(tmp.path());
        QString error;
        QVERIFY2(writer->acquire(&error), qPrintable(error));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        auto *control = qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl());
        QVERIFY(control);
        QSignalSpy finished(control, &LoopControl::actionFinished);
        test::named<QAction>(&w, "MoveOnRulesAction")->trigger();
        QPointer<MoveOnRulesDialog> dialog = test::named<MoveOnRulesDialog>(&w, "MoveOnRulesDialog");
        QVERIFY(dialog);
        dialog->roofBox()->setValue(65);
        dialog->buttons()->button(QDialogButtonBox::Ok)->click();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QVERIFY(finished.first().at(1).toString().contains(QStringLiteral("queued for the writer")));
        const QStringList queued = QDir(RequestQueue::dir(tmp.path())).entryList(QDir::Files);
        QCOMPARE(queued.size(), 1);
        QCOMPARE(rulesOnDisk(tmp.path()).roofPct, 80.0);
        // The writer applies it at its next boundary.
        writer.reset();
        auto store = RunStore::open(tmp.path(), &error); // applyRequests on open
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(rulesOnDisk(tmp.path()).roofPct, 65.0);
        QCOMPARE(rulesOnDisk(tmp.path()).maxConsecutiveReverts, 7);
    }

    void readOnlyWhenTheControlCannotEditRules()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        FakeLoopControl fake(LoopControl::CanStartStop | LoopControl::CanSteerKernels);
        w.setLoopControl(&fake);
        test::named<QAction>(&w, "MoveOnRulesAction")->trigger();
        QPointer<MoveOnRulesDialog> dialog = test::named<MoveOnRulesDialog>(&w, "MoveOnRulesDialog");
        QVERIFY(dialog);
        QVERIFY(!dialog->isEditable());
        QVERIFY(dialog->revertsBox()->isReadOnly());
        QVERIFY(!dialog->buttons()->button(QDialogButtonBox::Ok)->isVisible());
        QCOMPARE(dialog->revertsBox()->value(), 7); // still shows the rules
        QVERIFY(dialog->findChild<QLabel *>(QStringLiteral("readOnly"))
                    ->text()
                    .contains(QStringLiteral("not supported by fake loop")));
        dialog->reject();
        QTRY_VERIFY(!dialog);
        w.setLoopControl(nullptr);
    }

    void defaultImplementationRefuses()
    {
        FakeLoopControl fake(LoopControl::CanStartStop);
        QSignalSpy failed(&fake, &LoopControl::actionFailed);
        fake.setMoveOnRules(MoveOnRules());
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.first().at(0).toString(), QStringLiteral("setMoveOnRules"));
    }

    void historyAndWarningFromTheRun()
    {
        RunSnapshot run;
        RunLoader::setRunJson(run, R"({"move_on": {"roof_pct": 0.9}})", nullptr);
        MoveOnRulesDialog dialog;
        dialog.setRun(run);
        QCOMPARE(dialog.rules(), MoveOnRules()); // malformed: the defaults the loop uses
        QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("runJsonWarning"))
                    ->text()
                    .contains(QStringLiteral("roof_pct")));

        RunLoader::setRunJson(run, R"({"move_on": {"hours_per_kernel": 0}})", nullptr);
        for (int i = 0; i < 7; ++i) {
            MoveOnChange c;
            c.line = i + 1;
            c.time = QDateTime::currentDateTimeUtc();
            c.by = QStringLiteral("user%1").arg(i);
            run.moveOnChanges << c;
        }
        dialog.setRun(run);
        QCOMPARE(dialog.hoursBox()->text(), QStringLiteral("off"));
        QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("runJsonWarning"))->text().isEmpty());
        const QString text = dialog.currentText();
        QVERIFY2(text.contains(QStringLiteral("Changed 7 times")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("user6")));
        QVERIFY(!text.contains(QStringLiteral("user1 "))); // only the latest five
        QVERIFY(text.contains(QStringLiteral("2 earlier")));
    }
};

AK_TEST_CLASS(MoveOnRulesDialogTest)
#include "tst_moveonrulesdialog.moc"
