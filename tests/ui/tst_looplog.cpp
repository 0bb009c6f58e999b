// The loop's live lines from another process (the CLI's `run`, written to .git/autokernel-loop.log)
// reach the window's log on reload: only what is new, each line once, its own loop's lines left out,
// and a truncated or rotated file read again from its start.
#include "looplogfile.h"
#include "mainwindow.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/logview.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace ak;

namespace {

const nlohmann::json kRunJson { { "model", "tiny.py" } };

bool write(const QString &dir, const QByteArray &data, QIODevice::OpenMode mode)
{
    QFile f(LoopLogFile::path(dir));
    return f.open(QIODevice::WriteOnly | mode) && f.write(data) == data.size();
}

QByteArray line(qint64 pid, const QString &text)
{
    return LoopLogFile::format(pid, text, QDateTime::currentDateTimeUtc());
}

bool reloadAndWait(MainWindow &w)
{
    QSignalSpy loaded(&w, &MainWindow::runLoaded);
    w.reload();
    return loaded.wait(10000) || loaded.count() > 0;
}

} // namespace

class LoopLogTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void linesOfAnotherProcessAppearAfterAReload()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson,
            { test::testKernel(1, QStringLiteral("matmul"), "BASE = 1\n", QStringLiteral("matmul"), 0.5) }));
        QVERIFY(
            write(tmp.path(), line(4242, QStringLiteral("[cpu] an earlier loop's line")), QIODevice::Append));

        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        LogView *log = test::named<LogView>(&w, "LogView");

        const qint64 self = QCoreApplication::applicationPid();
        QVERIFY(write(tmp.path(),
            line(4242, QStringLiteral("[cpu] #7 01-matmul keep 1.31x"))
                + line(self, QStringLiteral("[cpu] mine"))
                + "2025-01-01T00:00:00Z [pid 4242] [cpu] half a li",
            QIODevice::Append));
        QVERIFY(reloadAndWait(w));
        QTRY_VERIFY2(
            log->toPlainText().contains(QStringLiteral("loop (pid 4242): [cpu] #7 01-matmul keep 1.31x")),
            qPrintable(log->toPlainText()));
        QVERIFY2(!log->toPlainText().contains(QStringLiteral("an earlier loop's line")),
            "the file's history before the open is not news");
        QVERIFY2(
            !log->toPlainText().contains(QStringLiteral("mine")), "this window's own loop is logged already");
        QVERIFY2(
            !log->toPlainText().contains(QStringLiteral("half a li")), "a line without its newline waits");

        // The rest of the line arrives; the next reload shows it whole and the earlier line not again.
        QVERIFY(write(tmp.path(), "ne\n", QIODevice::Append));
        QVERIFY(reloadAndWait(w));
        QTRY_VERIFY2(log->toPlainText().contains(QStringLiteral("loop (pid 4242): [cpu] half a line")),
            qPrintable(log->toPlainText()));
        QCOMPARE(log->toPlainText().count(QStringLiteral("#7 01-matmul keep")), 1);

        // Truncated (rotated) and shorter than what was read: read again from its start.
        QVERIFY(write(tmp.path(), line(4343, QStringLiteral("[cpu] after rotation")), QIODevice::Truncate));
        QVERIFY(reloadAndWait(w));
        QTRY_VERIFY2(log->toPlainText().contains(QStringLiteral("loop (pid 4343): [cpu] after rotation")),
            qPrintable(log->toPlainText()));
        QCOMPARE(log->toPlainText().count(QStringLiteral("#7 01-matmul keep")), 1);
    }

    void appendRotatesAtTheCap()
    {
        QTemporaryDir tmp;
        QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral(".git")));
        const QString text(4000, QLatin1Char('x'));
        for (qint64 written = 0; written < LoopLogFile::MaxBytes + 8000; written += text.size())
            LoopLogFile::append(tmp.path(), text);
        QVERIFY(QFile::exists(LoopLogFile::path(tmp.path()) + QStringLiteral(".1")));
        QVERIFY(QFileInfo(LoopLogFile::path(tmp.path())).size() <= LoopLogFile::MaxBytes);
        QVERIFY(
            QFileInfo(LoopLogFile::path(tmp.path()) + QStringLiteral(".1")).size() <= LoopLogFile::MaxBytes);
        // A reader at the old file's end starts the new file from its beginning.
        LoopLogFile::Position pos;
        pos.offset = LoopLogFile::MaxBytes;
        const auto lines = LoopLogFile::readNew(tmp.path(), &pos);
        QVERIFY(!lines.empty());
        QCOMPARE(lines.front().pid, QCoreApplication::applicationPid());
        QCOMPARE(lines.front().text, text);
    }
};

AK_TEST_CLASS(LoopLogTest)
#include "tst_looplog.moc"
