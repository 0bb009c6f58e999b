// "Open example run": the window finds or creates a bundled example's run in the background and opens
// it. The creation test profiles the real gpt2 example on the CPU through the worker (a few seconds
// with torch; $AUTOKERNEL_TEST_PYTHON), exactly as Help ▸ Open Example Run does, only into a temporary
// base folder instead of the user's data folder.
#include "mainwindow.h"
#include "runrecording.h"
#include "services/examplerun.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/emptystate.h"
#include "widgets/logview.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QThreadPool>

using namespace ak;

namespace {

QString python()
{
    return qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
}

ExampleRun::Options options(const QString &baseDir)
{
    ExampleRun::Options o;
    o.name = QStringLiteral("gpt2");
    o.baseDir = baseDir;
    o.device = QStringLiteral("cpu");
    o.python = python();
    o.iterations = 1;
    o.warmup = 1;
    o.timeoutMs = 180000;
    return o;
}

// Whether the window is preparing an example, as the user sees it: File ▸ Cancel Profiling is
// enabled exactly while a run is being created.
bool profiling(const MainWindow &w)
{
    return test::named<QAction>(&w, "CancelProfilingAction")->isEnabled();
}

} // namespace

class ExampleRunTest : public QObject
{
    Q_OBJECT
    // Opens `o` in `w` as Help ▸ Open Example Run does and waits for the run or its failure: the
    // failure's text, empty when the run loaded.
    static QString openAndWait(MainWindow &w, const ExampleRun::Options &o)
    {
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        QSignalSpy failed(&w, &MainWindow::exampleFailed);
        w.openExample(o);
        if (!QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 30000))
            return QStringLiteral("neither loaded nor failed within 30 s");
        return failed.isEmpty() ? QString() : failed.first().at(1).toString();
    }

private Q_SLOTS:
    void bundledExamplesAreListed()
    {
        const QStringList names = ExampleRun::names();
        for (const char *n : { "gpt2", "llama", "bert", "cnn" })
            QVERIFY2(names.contains(QLatin1String(n)), qPrintable(names.join(QLatin1Char(' '))));
        ExampleRun::Options o;
        o.name = QStringLiteral("gpt2");
        QCOMPARE(ExampleRun::runDirFor(o, QStringLiteral("cpu")),
            QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation)
                + QStringLiteral("/examples/gpt2-cpu"));
        MainWindow w;
        auto *menu = w.menuBar()->findChild<QMenu *>(QStringLiteral("ExampleMenu"));
        QVERIFY(menu);
        // The examples, then the bundled recordings, each labelled as one.
        const QStringList recordings = ExampleRun::recordings();
        QCOMPARE(menu->actions().size(), names.size() + recordings.size());
        for (int i = 0; i < recordings.size(); ++i)
            QCOMPARE(menu->actions().at(names.size() + i)->text(),
                recordings.at(i) + QStringLiteral(" (recording)"));
    }

    void createsTheExampleRunAndOpensIt()
    {
        QTemporaryDir base;
        MainWindow w;
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        QSignalSpy failed(&w, &MainWindow::exampleFailed);
        w.openExample(options(base.path()));
        // The GUI thread is free while the model is profiled: the window says what is happening.
        QVERIFY(profiling(w));
        QVERIFY(test::named<EmptyState>(&w, "NoRunState")
                    ->title()
                    .contains(QStringLiteral("Preparing the gpt2 example run")));
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() + failed.count() > 0, 240000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));

        const QString dir = QDir(base.path()).filePath(QStringLiteral("gpt2-cpu"));
        QCOMPARE(w.windowFilePath(), dir);
        QVERIFY(w.isShowingRun());
        QVERIFY(!profiling(w));
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/profile.json")));
        QStringList kernels;
        QDirIterator it(dir + QStringLiteral("/kernels"), { QStringLiteral("kernel.py") }, QDir::Files,
            QDirIterator::Subdirectories);
        while (it.hasNext())
            kernels << it.next();
        QVERIFY2(!kernels.isEmpty() && kernels.size() <= 5, qPrintable(kernels.join(QLatin1Char(' '))));
        QVERIFY(test::named<QTableView>(&w, "KernelView")->model()->rowCount() > 0);
        const QString log = test::named<LogView>(&w, "LogView")->toPlainText();
        QVERIFY2(log.contains(QStringLiteral("example gpt2: profiling:")), qPrintable(log));
        QVERIFY(log.contains(QStringLiteral("example gpt2: created")));
        // Created in a hidden folder and renamed into place: nothing else is left next to it.
        QCOMPARE(QDir(base.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
            QStringList { QStringLiteral("gpt2-cpu") });

        // The second time the run exists and opens directly, without profiling.
        MainWindow again;
        QSignalSpy loadedAgain(&again, &MainWindow::runLoaded);
        again.openExample(options(base.path()));
        QTRY_COMPARE_WITH_TIMEOUT(loadedAgain.count(), 1, 10000);
        QCOMPARE(again.windowFilePath(), dir);
        QVERIFY(test::named<LogView>(&again, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("example gpt2: found")));
    }

    void missingPythonIsShownInTheWindow()
    {
        QTemporaryDir base;
        MainWindow w;
        QSignalSpy failed(&w, &MainWindow::exampleFailed);
        ExampleRun::Options o = options(base.path());
        o.python = QStringLiteral("/nonexistent/python3");
        w.openExample(o);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QVERIFY(!w.isShowingRun());
        QVERIFY(test::named<EmptyState>(&w, "NoRunState")
                    ->title()
                    .contains(QStringLiteral("Could not prepare the gpt2 example run")));
        QVERIFY2(test::named<EmptyState>(&w, "NoRunState")
                     ->body()
                     .contains(QStringLiteral("No Python with PyTorch")),
            qPrintable(test::named<EmptyState>(&w, "NoRunState")->body()));
        QVERIFY(test::named<EmptyState>(&w, "NoRunState")
                    ->body()
                    .contains(QStringLiteral("/nonexistent/python3")));
        QVERIFY(test::named<LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("No Python with PyTorch")));
        QCOMPARE(QDir(base.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
            QStringList());
    }

    void unknownExampleIsRefused()
    {
        QTemporaryDir base;
        MainWindow w;
        QSignalSpy failed(&w, &MainWindow::exampleFailed);
        w.openExample(QStringLiteral("resnet9000"));
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("gpt2")));
        QVERIFY(!profiling(w));
        // A bad name asked for while an example is being prepared leaves that one alone.
        ExampleRun::Options o = options(base.path());
        o.python = QStringLiteral("/nonexistent/python3"); // fails fast, without profiling
        w.openExample(o);
        w.openExample(QStringLiteral("resnet9000"));
        QVERIFY(profiling(w));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 3, 30000);
        QCOMPARE(failed.at(2).at(0).toString(), QStringLiteral("gpt2"));
    }

    void closingWhileCreatingIsSafe()
    {
        // The window goes away mid-profile: the worker is cancelled and no half-made run is left
        // (either nothing, or, if profiling won the race, the complete run).
        QTemporaryDir base;
        auto *w = new MainWindow;
        w->openExample(options(base.path()));
        QTRY_VERIFY_WITH_TIMEOUT(
            test::named<LogView>(w, "LogView")->toPlainText().contains(QStringLiteral("profiling:")), 60000);
        delete w;
        const auto entries = [&base] {
            return QDir(base.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
        };
        QTRY_VERIFY_WITH_TIMEOUT(
            entries().isEmpty() || entries() == QStringList { QStringLiteral("gpt2-cpu") }, 30000);
        if (!entries().isEmpty())
            QVERIFY(QFileInfo::exists(base.filePath(QStringLiteral("gpt2-cpu/profile.json"))));
        QThreadPool::globalInstance()->waitForDone(30000);
    }

    void recordingOpensLabelled()
    {
        // A run recorded elsewhere (RunRecording), opened as Help ▸ Open Example Run opens a bundled
        // recording: restored into the base folder, labelled in the title and the summary, the loop
        // not startable on it; found, not restored, the second time.
        QTemporaryDir tmp;
        const QString original = tmp.filePath(QStringLiteral("original"));
        QVERIFY(test::makeRunDir(
            original, nlohmann::json { { "model", "llama" }, { "device", { { "name", "NVIDIA H200" } } } }));
        QString error;
        const QString file = tmp.filePath(QStringLiteral("h200-llama.json"));
        QVERIFY2(RunRecording::write(original, file, QStringLiteral("demo"), &error), qPrintable(error));
        ExampleRun::Options o;
        o.name = QStringLiteral("h200-llama");
        o.recording = file;
        o.baseDir = tmp.filePath(QStringLiteral("examples"));
        MainWindow w;
        const QString why = openAndWait(w, o);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(w.windowFilePath(), QDir(o.baseDir).filePath(QStringLiteral("h200-llama")));
        QVERIFY(w.windowTitle().contains(QStringLiteral("Recording")));
        QLabel *label = test::named<QLabel>(&w, "SummaryRecording");
        QVERIFY(!label->isHidden());
        QVERIFY2(
            label->text().contains(QStringLiteral("llama run on NVIDIA H200")), qPrintable(label->text()));
        QAction *start = test::named<SteeringActions>(&w, "SteeringActions")->start();
        QVERIFY(!start->isEnabled());
        QVERIFY2(start->toolTip().contains(QStringLiteral("recording")), qPrintable(start->toolTip()));
        QVERIFY(test::named<LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("recording h200-llama: created")));

        MainWindow again;
        QSignalSpy loadedAgain(&again, &MainWindow::runLoaded);
        again.openExample(o);
        QTRY_COMPARE_WITH_TIMEOUT(loadedAgain.count(), 1, 10000);
        QVERIFY(test::named<LogView>(&again, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("recording h200-llama: found")));
        // An ordinary run is not labelled.
        again.openRun(original);
        QTRY_COMPARE_WITH_TIMEOUT(loadedAgain.count(), 2, 10000);
        QVERIFY(test::named<QLabel>(&again, "SummaryRecording")->isHidden());
        QVERIFY(!again.windowTitle().contains(QStringLiteral("Recording")));
    }

    void bundledRecordingsOpen()
    {
        // Every recording compiled into the app (resources/recordings/) restores and opens, labelled
        // with the GPU it ran on: a recording that no longer matches the store's format fails here.
        const QStringList names = ExampleRun::recordings();
        QVERIFY(!names.isEmpty());
        for (const QString &name : names) {
            QTemporaryDir tmp;
            ExampleRun::Options o;
            o.name = name;
            o.recording = ExampleRun::recordingPath(name);
            o.baseDir = tmp.path();
            MainWindow w;
            const QString why = openAndWait(w, o);
            QVERIFY2(why.isEmpty(), qPrintable(name + QStringLiteral(": ") + why));
            const QString label = test::named<QLabel>(&w, "SummaryRecording")->text();
            const QString model = test::named<QLabel>(&w, "SummaryModel")->text();
            // Labelled as a recording, and whether it was measured in the model (#41); the GPU named
            // once: by the model part when verified there, else by the recording's label.
            const bool verified = label.contains(QStringLiteral("Recording · verified"));
            QVERIFY2(verified || label.contains(QStringLiteral("Recording · not verified in the model")),
                qPrintable(name + QStringLiteral(": ") + label));
            QVERIFY2((verified ? model : label).contains(QStringLiteral("NVIDIA")),
                qPrintable(name + QStringLiteral(": ") + label + QStringLiteral(" | ") + model));
            QVERIFY2(!verified || !label.contains(QStringLiteral("NVIDIA")),
                qPrintable(name + QStringLiteral(" says its device twice: ") + label));
            QVERIFY2(model.startsWith(QStringLiteral("Starters <b>"))
                    && model.contains(QStringLiteral(" · loop <b>")),
                qPrintable(name + QStringLiteral(": ") + model));
        }
    }
};

AK_TEST_CLASS(ExampleRunTest)
#include "tst_examplerun.moc"
