// `autokernel-cli review`: show review mode, switch it on and off directly or (while another process
// holds the run) queued for that writer, and refuse bad arguments with exit status 2.
#include "requestqueue.h"
#include "runloader.h"
#include "runlock.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

using namespace ak;

namespace {

bool reviewModeOnDisk(const QString &dir)
{
    const RunSnapshotPtr s = RunLoader::load(dir);
    return s && s->reviewMode;
}

int logLines(const QString &dir)
{
    QFile f(QDir(dir).filePath(QStringLiteral("experiments.jsonl")));
    return f.open(QIODevice::ReadOnly) ? int(f.readAll().count('\n')) : -1;
}

} // namespace

class ReviewCliTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(qEnvironmentVariable("AUTOKERNEL_CLI")),
            "AUTOKERNEL_CLI must point at the built binary");
    }

    void helpListsReview()
    {
        const test::CliResult r = test::runCli({ QStringLiteral("--help") });
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains(QStringLiteral("review ")));
        const test::CliResult h = test::runCli({ QStringLiteral("review"), QStringLiteral("--help") });
        QCOMPARE(h.exitCode, 0);
        QVERIFY(h.out.contains(QStringLiteral("RUN_DIR [on|off]")));
    }

    void switchesOnAndOff()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), nlohmann::json { { "model", "tiny.py" } }, {}));
        test::CliResult r = test::runCli({ QStringLiteral("review"), tmp.path() });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("review mode: off")), qPrintable(r.out));

        r = test::runCli({ QStringLiteral("review"), tmp.path(), QStringLiteral("on") });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("review mode: on")), qPrintable(r.out));
        QVERIFY(reviewModeOnDisk(tmp.path()));
        QVERIFY(!QFileInfo::exists(RunLock::lockPath(tmp.path()))); // the writer was closed again
        const int lines = logLines(tmp.path());
        r = test::runCli(
            { QStringLiteral("review"), tmp.path(), QStringLiteral("ON") }); // already on: nothing logged
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(logLines(tmp.path()), lines);
        r = test::runCli({ QStringLiteral("review"), tmp.path() });
        QVERIFY2(r.out.contains(QStringLiteral("review mode: on")), qPrintable(r.out));

        r = test::runCli({ QStringLiteral("review"), tmp.path(), QStringLiteral("off") });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("review mode: off")), qPrintable(r.out));
        QVERIFY(!reviewModeOnDisk(tmp.path()));
    }

    void queuesWhileAnotherProcessWrites()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), nlohmann::json { { "model", "tiny.py" } }, {}));
        QString error;
        {
            auto writer = std::make_unique<RunLock>(tmp.path()); // the loop's process
            QVERIFY2(writer->acquire(&error), qPrintable(error));
            const test::CliResult r
                = test::runCli({ QStringLiteral("review"), tmp.path(), QStringLiteral("on") });
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            QVERIFY2(r.out.contains(QStringLiteral("queued for the writer")), qPrintable(r.out));
            QCOMPARE(QDir(RequestQueue::dir(tmp.path())).entryList(QDir::Files).size(), 1);
            QVERIFY(!reviewModeOnDisk(tmp.path())); // not yet
        }
        auto store = RunStore::open(tmp.path(), &error); // the writer applies it (here: on open)
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->state().reviewMode);
    }

    void badArgumentsExit2_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("not on/off") << QStringList { QStringLiteral("maybe") }
                                    << QStringLiteral("expected 'on' or 'off', not 'maybe'");
        QTest::newRow("unknown option")
            << QStringList { QStringLiteral("--on") } << QStringLiteral("unknown option '--on'");
        QTest::newRow("too many") << QStringList { QStringLiteral("on"), QStringLiteral("off") }
                                  << QStringLiteral("usage");
    }

    void badArgumentsExit2()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), nlohmann::json { { "model", "tiny.py" } }, {}));
        const int lines = logLines(tmp.path());
        const test::CliResult r = test::runCli(QStringList { QStringLiteral("review"), tmp.path() } + args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QCOMPARE(logLines(tmp.path()), lines);
        QVERIFY(!reviewModeOnDisk(tmp.path()));
    }

    void notARunExit2()
    {
        QTemporaryDir tmp;
        test::CliResult r = test::runCli({ QStringLiteral("review"), tmp.path(), QStringLiteral("on") });
        QCOMPARE(r.exitCode, 2);
        r = test::runCli({ QStringLiteral("review"), tmp.path() });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("not a run directory")), qPrintable(r.err));
        QCOMPARE(test::runCli({ QStringLiteral("review") }).exitCode, 2);
    }
};

AK_TEST_CLASS(ReviewCliTest)
#include "tst_reviewcli.moc"
