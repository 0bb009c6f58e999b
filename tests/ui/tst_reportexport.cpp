#include "mainwindow.h"
#include "modelfixture.h"
#include "runreport.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/logview.h"
#include "widgets/reportexport.h"

#include <QAction>
#include <QFile>
#include <QImage>
#include <QMenuBar>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

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

    // The exported file in a real browser (Debian's chromium, headless; CI installs it): it renders,
    // every chart drawn (inline SVG, no external file to miss) with the outcome colours, nothing
    // blank. The screenshot is kept beside the test's temporary run while it runs.
    void exportedReportRendersInChromium()
    {
        const QString chromium = QStandardPaths::findExecutable(QStringLiteral("chromium"));
        if (chromium.isEmpty())
            QSKIP("chromium is not installed (packaging/setup-deps.sh installs it; CI has it)");
        QTemporaryDir dir;
        QString error;
        QVERIFY2(ak::test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        const QString html = dir.filePath(QStringLiteral("report.html"));
        QVERIFY2(ak::RunReport::write(dir.path(), html, &error), qPrintable(error));
        const QString png = dir.filePath(QStringLiteral("report.png"));
        QProcess browser;
        browser.setProcessChannelMode(QProcess::MergedChannels);
        browser.start(chromium,
            { QStringLiteral("--headless"), QStringLiteral("--no-sandbox"), QStringLiteral("--disable-gpu"),
                QStringLiteral("--hide-scrollbars"),
                QStringLiteral("--user-data-dir=") + dir.filePath(QStringLiteral("profile")),
                QStringLiteral("--window-size=1280,2400"), QStringLiteral("--screenshot=") + png,
                QUrl::fromLocalFile(html).toString() });
        QVERIFY(browser.waitForFinished(120000));
        QImage shot(png);
        QVERIFY2(!shot.isNull(), browser.readAll().constData());
        QCOMPARE(shot.size(), QSize(1280, 2400));
        // Colours of the page: the kept green of the charts' points and lines, the reverted grey, text.
        int kept = 0, reverted = 0, dark = 0;
        auto near = [](QRgb p, QRgb c) {
            return qAbs(qRed(p) - qRed(c)) < 24 && qAbs(qGreen(p) - qGreen(c)) < 24
                && qAbs(qBlue(p) - qBlue(c)) < 24;
        };
        for (int y = 0; y < shot.height(); y += 2)
            for (int x = 0; x < shot.width(); x += 2) {
                const QRgb p = shot.pixel(x, y);
                kept += near(p, qRgb(0x2f, 0x7d, 0x32)) ? 1 : 0;
                reverted += near(p, qRgb(0x9a, 0xa3, 0xb5)) ? 1 : 0;
                dark += qGray(p) < 80 ? 1 : 0;
            }
        QVERIFY2(kept > 50, qPrintable(QStringLiteral("kept-green pixels: %1").arg(kept)));
        QVERIFY2(reverted > 20, qPrintable(QStringLiteral("reverted-grey pixels: %1").arg(reverted)));
        QVERIFY2(dark > 2000, qPrintable(QStringLiteral("text pixels: %1").arg(dark)));
    }
};

AK_TEST_CLASS(ReportExportTest)
#include "tst_reportexport.moc"
