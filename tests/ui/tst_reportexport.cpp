#include "logview.h"
#include "mainwindow.h"
#include "modelfixture.h"
#include "reportexport.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QAction>
#include <QFile>
#include <QMenuBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

// File ▸ Export Report… in the window: the same HTML file as `autokernel-cli report`, off the GUI
// thread, the outcome in the log (core/runreport is tested in tests/core/tst_runreport.cpp).
class ReportExportTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void windowExportsTheOpenRun()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY2(ak::test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        ak::MainWindow w;
        ak::ReportExport *report = ak::test::named<ak::ReportExport>(&w, "ReportExport");
        QAction *action = w.findChild<QAction *>(QStringLiteral("ExportReportAction"));
        QVERIFY(action && action == report->action());
        QVERIFY(!action->isEnabled()); // no run yet
        QVERIFY(!report->exportTo(dir.filePath(QStringLiteral("none.html"))));

        QSignalSpy loaded(&w, &ak::MainWindow::runLoaded);
        w.openRun(dir.path());
        QTRY_COMPARE(loaded.count(), 1);
        QVERIFY(action->isEnabled());
        const QString out = dir.filePath(QStringLiteral("share/report.html"));
        QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("share"))));
        QSignalSpy finished(report, &ak::ReportExport::finished);
        QVERIFY(report->exportTo(out));
        QVERIFY(!action->isEnabled()); // one at a time
        QVERIFY(!report->exportTo(out));
        QTRY_COMPARE(finished.count(), 1);
        QVERIFY(finished.first().at(0).toBool());
        QVERIFY(action->isEnabled());
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray html = f.readAll();
        QVERIFY(html.startsWith("<!DOCTYPE html>"));
        QVERIFY(html.contains("AutoKernel report: gpt2"));
        QVERIFY(html.contains("data-kernel=\"06-layernorm\""));
        QVERIFY(ak::test::named<ak::LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("report written to %1").arg(out)));

        QVERIFY(report->exportTo(QStringLiteral("/proc/report.html")));
        QTRY_COMPARE(finished.count(), 2);
        QVERIFY(!finished.last().at(0).toBool());
        QVERIFY2(
            ak::test::named<ak::LogView>(&w, "LogView")->toPlainText().contains(QStringLiteral("report: ")),
            qPrintable(ak::test::named<ak::LogView>(&w, "LogView")->toPlainText()));
        QVERIFY(ak::test::named<ak::LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("/proc/report.html")));
    }
};

AK_TEST_CLASS(ReportExportTest)
#include "tst_reportexport.moc"
