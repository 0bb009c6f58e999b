#include "answerdialog.h"
#include "mainwindow.h"
#include "requestqueue.h"
#include "runaccess.h"
#include "runrecording.h"
#include "runstore.h"
#include "services/examplerun.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/diffview.h"
#include "widgets/steeringactions.h"

#include <QDirIterator>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace ak;

namespace {

// A run with a kernel and two kept experiments on it, made by the store like any run.
bool makeRunWithHistory(const QString &dir)
{
    if (!test::makeRunDir(dir,
            nlohmann::json { { "model", "llama" }, { "device", { { "name", "NVIDIA H200" } } } },
            { test::testKernel(1, QStringLiteral("rmsnorm"), "BASE = 1\n", QStringLiteral("rmsnorm"), 0.4) }))
        return false;
    QString error;
    auto store = RunStore::open(dir, &error);
    return store && test::recordExperiment(*store, QStringLiteral("01-rmsnorm"), 1.5, ExperimentStatus::Kept)
        && test::recordExperiment(*store, QStringLiteral("01-rmsnorm"), 2.0, ExperimentStatus::Kept);
}

QStringList writerTooltips(MainWindow &w)
{
    auto *s = test::named<SteeringActions>(&w, "SteeringActions");
    QStringList disabledWhy;
    for (QAction *a :
        { s->start(), s->pin(), s->skip(), s->revert(), s->accept(), s->reject(), s->reviewMode() })
        disabledWhy << (a->isEnabled() ? QStringLiteral("ENABLED: ") + a->text() : a->toolTip());
    return disabledWhy;
}

void selectCommit(MainWindow &w, int row)
{
    QTableView *commits = test::named<QTableView>(&w, "CommitView");
    commits->selectionModel()->setCurrentIndex(
        commits->model()->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

bool chownTree(const QString &dir, uid_t uid)
{
    bool ok = ::chown(QFile::encodeName(dir).constData(), uid, uid) == 0;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
        QDirIterator::Subdirectories);
    while (it.hasNext())
        ok = ::lchown(QFile::encodeName(it.next()).constData(), uid, uid) == 0 && ok;
    return ok;
}

// Makes `dirs` refuse new files for real: without root, by the permission bits; as root (who ignores
// them), by the immutable attribute. Returns why it could not, empty on success.
QString makeUnwritable(const QStringList &dirs, bool on)
{
    for (const QString &d : dirs) {
        if (::geteuid() != 0) {
            if (::chmod(QFile::encodeName(d).constData(), on ? 0555 : 0755) != 0)
                return QStringLiteral("chmod %1 failed").arg(d);
            continue;
        }
        const test::CliResult r = test::runProgram(
            QStringLiteral("chattr"), { on ? QStringLiteral("+i") : QStringLiteral("-i"), d }, 10000);
        if (r.exitCode != 0)
            return QStringLiteral("chattr is not available here (%1)").arg(r.err.trimmed());
    }
    return QString();
}

} // namespace

class ReadOnlyRunsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void exampleRecordingCannotBeChanged()
    {
        // A recording opened as an example: every writer refuses it (the store, a queued steering
        // request), the window disables every steering action with the reason; a restore of the
        // same recording elsewhere is an ordinary run.
        QTemporaryDir tmp;
        const QString original = tmp.filePath(QStringLiteral("original"));
        QVERIFY(makeRunWithHistory(original));
        QString error;
        const QString file = tmp.filePath(QStringLiteral("h200-llama.json"));
        QVERIFY2(RunRecording::write(original, file, QStringLiteral("demo"), &error), qPrintable(error));
        ExampleRun::Options o;
        o.name = QStringLiteral("h200-llama");
        o.recording = file;
        o.baseDir = tmp.filePath(QStringLiteral("examples"));
        MainWindow w;
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openExample(o);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        const QString example = w.windowFilePath();
        QVERIFY(!RunStore::readOnlyReason(example).isEmpty());

        QVERIFY(!RunStore::open(example, &error));
        QVERIFY2(error.contains(QStringLiteral("read-only")) && error.contains(QStringLiteral("restore")),
            qPrintable(error));
        error.clear();
        QVERIFY(!RequestQueue::queue(example, nlohmann::json { { "action", "pin" } }, &error));
        QVERIFY2(error.contains(QStringLiteral("read-only")), qPrintable(error));

        QLabel *banner = test::named<QLabel>(&w, "ReadOnlyBanner");
        QVERIFY(!banner->isHidden());
        QVERIFY2(banner->text().contains(QStringLiteral("recording")), qPrintable(banner->text()));
        selectCommit(w, 0); // the newest kept experiment: Restore would rewrite nothing, still refused
        for (const QString &tip : writerTooltips(w))
            QVERIFY2(tip.contains(QStringLiteral("Read only")) && tip.contains(QStringLiteral("recording")),
                qPrintable(tip));

        const QString copy = tmp.filePath(QStringLiteral("mine"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(RunRecording::restore(f.readAll(), file, copy, &error), qPrintable(error));
        QVERIFY(RunStore::readOnlyReason(copy).isEmpty());
        QVERIFY2(RunStore::open(copy, &error), qPrintable(error));
    }

    void restoreOnTheHeadIsOffAndOtherwiseAsks()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(QStringLiteral("run"));
        QVERIFY(makeRunWithHistory(dir));
        MainWindow w;
        w.show();
        QVERIFY(test::openAndWait(w, dir));
        QVERIFY(test::named<QLabel>(&w, "ReadOnlyBanner")->isHidden());
        QAction *restore = test::named<SteeringActions>(&w, "SteeringActions")->revert();
        selectCommit(w, 0); // experiment 3: the kernel's head
        QVERIFY(!restore->isEnabled());
        QVERIFY2(restore->toolTip().contains(QStringLiteral("already")), qPrintable(restore->toolTip()));
        selectCommit(w, 1); // experiment 2, kept before it
        QTRY_VERIFY(restore->isEnabled());
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        restore->trigger();
        QVERIFY(test::answer("RestoreConfirmation", QMessageBox::Cancel)); // nothing written
        QTest::qWait(300);
        QCOMPARE(test::named<QTableView>(&w, "CommitView")->model()->rowCount(), 3);
        restore->trigger();
        QVERIFY(test::answer("RestoreConfirmation", QMessageBox::Yes));
        QTRY_COMPARE_WITH_TIMEOUT(test::named<QTableView>(&w, "CommitView")->model()->rowCount(), 4, 10000);
    }

    void foreignOwnedRunOpensReadOnlyWithItsDiffs()
    {
        if (::geteuid() != 0)
            QSKIP("giving a run to another user needs root");
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(QStringLiteral("theirs"));
        QVERIFY(makeRunWithHistory(dir));
        QVERIFY(chownTree(dir, 4242));
        const RunAccess access = RunAccess::check(dir);
        QVERIFY2(
            access.readOnlyWhy.contains(QStringLiteral("belongs to user")), qPrintable(access.readOnlyWhy));

        MainWindow w;
        w.show();
        QVERIFY(test::openAndWait(w, dir));
        QLabel *banner = test::named<QLabel>(&w, "ReadOnlyBanner");
        QVERIFY(!banner->isHidden());
        QVERIFY2(
            banner->text().contains(QStringLiteral("autokernel-cli record")), qPrintable(banner->text()));
        selectCommit(w, 1);
        for (const QString &tip : writerTooltips(w))
            QVERIFY2(tip.contains(QStringLiteral("belongs to user")), qPrintable(tip));
        // The diff still reads: libgit2's owner check (safe.directory) is off for reading.
        auto *diff = test::named<DiffView>(&w, "DiffView");
        QTRY_VERIFY_WITH_TIMEOUT(diff->editor(1)->isVisible(), 5000);
        QVERIFY2(diff->editor(1)->toPlainText().contains(QStringLiteral("X = ")),
            qPrintable(diff->editor(1)->toPlainText()));
        QVERIFY(chownTree(dir, 0)); // so that the temporary folder can go
    }

    void unwritableRunOpensReadOnly()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(QStringLiteral("locked"));
        QVERIFY(makeRunWithHistory(dir));
        const QStringList dirs { dir, QDir(dir).filePath(QStringLiteral(".git")) };
        QVERIFY(RunAccess::check(dir).readOnlyWhy.isEmpty());
        if (const QString why = makeUnwritable(dirs, true); !why.isEmpty())
            QSKIP(qPrintable(why));
        QString probeError;
        const bool writable = RunAccess::canCreateFileIn(dir, &probeError);
        const RunAccess access = RunAccess::check(dir);
        MainWindow w;
        w.show();
        const bool opened = test::openAndWait(w, dir);
        const bool bannerShown = !test::named<QLabel>(&w, "ReadOnlyBanner")->isHidden();
        const QString bannerText = test::named<QLabel>(&w, "ReadOnlyBanner")->text();
        const QStringList tips = writerTooltips(w);
        makeUnwritable(dirs, false);
        QVERIFY(!writable);
        QVERIFY2(
            access.readOnlyWhy.contains(QStringLiteral("cannot be written")), qPrintable(access.readOnlyWhy));
        QVERIFY(opened);
        QVERIFY(bannerShown);
        QVERIFY2(bannerText.contains(QStringLiteral("chmod")), qPrintable(bannerText));
        for (const QString &tip : tips)
            QVERIFY2(tip.contains(QStringLiteral("cannot be written")), qPrintable(tip));
        // Permissions back: File ▸ Reload finds the run writable again and steering returns.
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        test::named<QAction>(&w, "ReloadAction")->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() > 0, 5000);
        QVERIFY(test::named<QLabel>(&w, "ReadOnlyBanner")->isHidden());
    }
};

AK_TEST_CLASS(ReadOnlyRunsTest)
#include "tst_readonlyruns.moc"
