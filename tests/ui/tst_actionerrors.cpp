// Errors of window actions where the user looks (#41): a steering action that fails shows in a banner
// over the workspace until dismissed or the next success; a run that cannot be created (a model with a
// syntax error) opens a dialog with the traceback's end, the whole of it under Details.
#include "dialogs/newrundialog.h"
#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/actionerrorbanner.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace ak;

class ActionErrorsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aFailedActionShowsInTheBanner()
    {
        MainWindow w;
        w.show();
        auto *control = new FakeLoopControl(LoopControl::CanSteerKernels, &w);
        w.setLoopControl(control);
        auto *banner = w.findChild<ActionErrorBanner *>(QStringLiteral("ActionErrorBanner"));
        QVERIFY(banner);
        QVERIFY(banner->isHidden());
        Q_EMIT control->actionFailed(QStringLiteral("pin"), QStringLiteral("kernel 02-softmax is skipped"));
        QVERIFY(banner->isVisible());
        QVERIFY2(banner->text().contains(QStringLiteral("pin failed"))
                && banner->text().contains(QStringLiteral("kernel 02-softmax is skipped")),
            qPrintable(banner->text()));
        // Dismiss closes it; a later failure shows again; a success clears it.
        Q_EMIT banner->linkActivated(QStringLiteral("dismiss"));
        QVERIFY(banner->isHidden());
        Q_EMIT control->actionFailed(QStringLiteral("skip"), QStringLiteral("no such kernel"));
        QVERIFY(banner->isVisible());
        QCOMPARE(banner->error(), QStringLiteral("no such kernel"));
        Q_EMIT control->actionFinished(QStringLiteral("skip"), QStringLiteral("02-softmax skipped"));
        QVERIFY(banner->isHidden());
    }

    void aRunThatCannotBeCreatedOpensADialog()
    {
        QTemporaryDir tmp;
        const QString model = tmp.filePath(QStringLiteral("broken.py"));
        QFile f(model);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("import torch\ndef model(:\n    pass\n"); // a syntax error
        f.close();
        ExampleRun::Options o;
        o.name = QStringLiteral("broken");
        o.model = model;
        o.runDir = tmp.filePath(QStringLiteral("runs/broken"));
        o.device = QStringLiteral("cpu");
        o.python = QStringLiteral("/usr/bin/python3");
        MainWindow w;
        w.show();
        QSignalSpy failed(&w, &MainWindow::exampleFailed);
        w.openExample(o);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 120000);
        QMessageBox *box = nullptr;
        QTRY_VERIFY((box = w.findChild<QMessageBox *>(QStringLiteral("RunCreationFailedDialog"))));
        QVERIFY(box->isVisible());
        QVERIFY2(box->text().contains(QStringLiteral("broken")), qPrintable(box->text()));
        QVERIFY(!box->informativeText().isEmpty());
        QCOMPARE(box->detailedText(), failed.first().at(1).toString());
        auto *banner = w.findChild<ActionErrorBanner *>(QStringLiteral("ActionErrorBanner"));
        QVERIFY(banner->isVisible());
        box->close();

        // New Run offers the model that failed again, with its settings, to fix rather than retype.
        QString seenModel, seenDevice, seenPython;
        QTimer::singleShot(0, &w, [&] {
            auto *dialog = qobject_cast<NewRunDialog *>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            seenModel = dialog->options().model;
            seenDevice = dialog->options().device;
            seenPython = dialog->options().python;
            dialog->reject();
        });
        test::named<QAction>(&w, "NewRunAction")->trigger();
        QCOMPARE(QDir::fromNativeSeparators(seenModel), model);
        QCOMPARE(seenDevice, QStringLiteral("cpu"));
        QCOMPARE(seenPython, QStringLiteral("/usr/bin/python3"));
    }
};

AK_TEST_CLASS(ActionErrorsTest)
#include "tst_actionerrors.moc"
