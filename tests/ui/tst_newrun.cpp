// File ▸ New Run…: the dialog refuses, naming the field and the cause, what cannot work (no model
// file, not Python, no get_model(), a folder holding a run); a model file of one's own is profiled
// through the worker (the real CPU profile, $AUTOKERNEL_TEST_PYTHON) into the chosen folder and opens;
// File ▸ Cancel Profiling stops it and leaves nothing behind.
#include "dialogs/newrundialog.h"
#include "mainwindow.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/emptystate.h"
#include "widgets/logview.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QThreadPool>

using namespace ak;

namespace {

// A model of one's own: a linear layer and a softmax, the profiler's two commonest targets.
const char *kTinyModel = R"(import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)


def get_model():
    return Tiny()


def get_inputs():
    return [torch.randn(32, 64)]
)";

bool write(const QString &path, const QByteArray &text)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

QString python()
{
    return qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
}

} // namespace

class NewRunTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void dialogNamesWhatCannotWork()
    {
        QTemporaryDir tmp;
        NewRunDialog d;
        QVERIFY(!d.canAccept());
        QVERIFY(d.problem().startsWith(QStringLiteral("Model file:")));

        const QString missing = tmp.filePath(QStringLiteral("nope.py"));
        d.setModelFile(missing);
        QVERIFY(!d.canAccept());
        QVERIFY2(d.problem().contains(QStringLiteral("does not exist")), qPrintable(d.problem()));

        const QString text = tmp.filePath(QStringLiteral("model.txt"));
        QVERIFY(write(text, "get_model get_inputs"));
        d.setModelFile(text);
        QVERIFY(d.problem().contains(QStringLiteral("not a Python file")));

        const QString noInputs = tmp.filePath(QStringLiteral("half.py"));
        QVERIFY(write(noInputs, "def get_model():\n    return None\n"));
        d.setModelFile(noInputs);
        QVERIFY2(d.problem().contains(QStringLiteral("get_inputs()")), qPrintable(d.problem()));

        const QString model = tmp.filePath(QStringLiteral("tiny.py"));
        QVERIFY(write(model, kTinyModel));
        d.setModelFile(model);
        // A run folder is suggested from the model's name until the user chooses one.
        QVERIFY2(d.canAccept(), qPrintable(d.problem()));
        QVERIFY(QFileInfo(d.runDirEdit()->text()).fileName().startsWith(QStringLiteral("tiny-")));

        QVERIFY(test::makeRunDir(tmp.filePath(QStringLiteral("taken")), nlohmann::json::object(), {}));
        d.setRunDir(tmp.filePath(QStringLiteral("taken")));
        QVERIFY(!d.canAccept());
        QVERIFY(d.problem().contains(QStringLiteral("already holds a run")));
        QVERIFY(QDir().mkpath(tmp.filePath(QStringLiteral("busy/x"))));
        d.setRunDir(tmp.filePath(QStringLiteral("busy")));
        QVERIFY(d.problem().contains(QStringLiteral("not empty")));
        d.pythonEdit()->setText(tmp.filePath(QStringLiteral("no-python")));
        d.setRunDir(tmp.filePath(QStringLiteral("fresh")));
        QVERIFY(d.problem().startsWith(QStringLiteral("Python:")));
        d.pythonEdit()->clear();
        QVERIFY(d.canAccept());
        d.deviceBox()->setCurrentIndex(d.deviceBox()->findData(QStringLiteral("cpu")));
        d.dtypeBox()->setCurrentIndex(d.dtypeBox()->findData(QStringLiteral("fp32")));

        const ExampleRun::Options o = d.options();
        QCOMPARE(o.model, QFileInfo(model).absoluteFilePath());
        QCOMPARE(o.name, QStringLiteral("tiny"));
        QCOMPARE(o.runDir, tmp.filePath(QStringLiteral("fresh")));
        QCOMPARE(o.device, QStringLiteral("cpu"));
        QCOMPARE(o.dtype, QStringLiteral("fp32"));

        // A bundled example needs no file.
        d.setExample(QStringLiteral("gpt2"));
        QVERIFY(d.canAccept());
        QCOMPARE(d.options().name, QStringLiteral("gpt2"));
        QVERIFY(d.options().model.isEmpty());
    }

    void profilesAModelFileIntoTheChosenFolder()
    {
        QTemporaryDir tmp;
        const QString model = tmp.filePath(QStringLiteral("tiny.py"));
        QVERIFY(write(model, kTinyModel));
        const QString runDir = tmp.filePath(QStringLiteral("runs/tiny"));
        QVERIFY(QDir().mkpath(runDir)); // an empty folder made in the file dialog is fine
        ExampleRun::Options o;
        o.name = QStringLiteral("tiny");
        o.model = model;
        o.runDir = runDir;
        o.device = QStringLiteral("cpu");
        o.dtype = QStringLiteral("fp32");
        o.python = python();
        o.iterations = 1;
        o.warmup = 1;
        o.timeoutMs = 180000;
        MainWindow w;
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        QSignalSpy failed(&w, &MainWindow::exampleFailed);
        w.openExample(o);
        QVERIFY(test::named<QAction>(&w, "CancelProfilingAction")->isEnabled());
        QVERIFY(
            test::named<EmptyState>(&w, "NoRunState")->title().contains(QStringLiteral("a run of tiny.py")));
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() + failed.count() > 0, 240000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
        QCOMPARE(w.windowFilePath(), runDir);
        QVERIFY(!test::named<QAction>(&w, "CancelProfilingAction")->isEnabled());
        QVERIFY(QFileInfo::exists(runDir + QStringLiteral("/profile.json")));
        QFile profile(runDir + QStringLiteral("/profile.json"));
        QVERIFY(profile.open(QIODevice::ReadOnly));
        QVERIFY(profile.readAll().contains("tiny.py"));
        QVERIFY(test::named<QTableView>(&w, "KernelView")->model()->rowCount() > 0);
        QVERIFY(test::named<LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("new run tiny.py: created")));

        // The same folder again: it holds a run now, and a new run is refused rather than mixed in.
        MainWindow again;
        QSignalSpy refused(&again, &MainWindow::exampleFailed);
        again.openExample(o);
        QTRY_COMPARE_WITH_TIMEOUT(refused.count(), 1, 30000);
        QVERIFY(refused.first().at(1).toString().contains(QStringLiteral("already holds a run")));
    }

    void cancelLeavesNothing()
    {
        QTemporaryDir tmp;
        const QString model = tmp.filePath(QStringLiteral("tiny.py"));
        QVERIFY(write(model, kTinyModel));
        ExampleRun::Options o;
        o.name = QStringLiteral("tiny");
        o.model = model;
        o.runDir = tmp.filePath(QStringLiteral("runs/tiny"));
        o.device = QStringLiteral("cpu");
        o.python = python();
        MainWindow w;
        QSignalSpy failed(&w, &MainWindow::exampleFailed);
        w.openExample(o);
        test::named<QAction>(&w, "CancelProfilingAction")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
        QCOMPARE(failed.first().at(1).toString(), QStringLiteral("cancelled"));
        QCOMPARE(test::named<EmptyState>(&w, "NoRunState")->title(), QStringLiteral("Profiling cancelled"));
        QVERIFY(!QFileInfo::exists(o.runDir));
        QCOMPARE(QDir(tmp.filePath(QStringLiteral("runs")))
                     .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
            QStringList());
        QThreadPool::globalInstance()->waitForDone(30000);
    }
};

AK_TEST_CLASS(NewRunTest)
#include "tst_newrun.moc"
