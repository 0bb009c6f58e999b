// `autokernel-cli rules`: print the move-on rules, change some of them directly or (while another
// process holds the run) queued for that writer, and refuse bad arguments with exit status 2.
#include "moveonrules.h"
#include "requestqueue.h"
#include "runconfig.h"
#include "runloader.h"
#include "runlock.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

using namespace ak;

namespace {

MoveOnRules rulesOnDisk(const QString &dir)
{
    QFile f(QDir(dir).filePath(QStringLiteral("run.json")));
    RunConfig c;
    if (!f.open(QIODevice::ReadOnly) || !RunConfig::parse(f.readAll(), &c) || !c.moveOnWarning.isEmpty())
        qWarning("run.json unreadable");
    return c.moveOn;
}

} // namespace

class RulesCliTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(qEnvironmentVariable("AUTOKERNEL_CLI")),
            "AUTOKERNEL_CLI must point at the built binary");
    }

    void helpListsRules()
    {
        const test::CliResult r = test::runCli({ QStringLiteral("--help") });
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains(QStringLiteral("rules ")));
        const test::CliResult h = test::runCli({ QStringLiteral("rules"), QStringLiteral("--help") });
        QCOMPARE(h.exitCode, 0);
        QVERIFY(h.out.contains(QStringLiteral("--speedup-over-baseline")));
        QVERIFY(h.out.contains(QStringLiteral("--max-in-model-misses")));
        QVERIFY(h.out.contains(QStringLiteral("0 switches a rule off")));
    }

    void printsTheRules()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(),
            nlohmann::json { { "model", "tiny.py" }, { "move_on", { { "roof_pct", 80 } } } }, {}));
        const test::CliResult r = test::runCli({ QStringLiteral("rules"), tmp.path() });
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("roof_pct +80\\n"))), qPrintable(r.out));
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("max_consecutive_reverts +5\\n"))),
            qPrintable(r.out));
        const test::CliResult j
            = test::runCli({ QStringLiteral("rules"), tmp.path(), QStringLiteral("--json") });
        QCOMPARE(j.exitCode, 0);
        MoveOnRules parsed;
        QString why;
        QVERIFY2(MoveOnRules::fromJson(j.out.toUtf8(), &parsed, &why), qPrintable(why));
        QCOMPARE(parsed.roofPct, 80.0);
        QCOMPARE(parsed.maxConsecutiveReverts, 5);
    }

    void setsTheGivenRulesDirectly()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(),
            nlohmann::json { { "model", "tiny.py" }, { "move_on", { { "roof_pct", 80 } } } }, {}));
        const test::CliResult r = test::runCli({ QStringLiteral("rules"), tmp.path(),
            QStringLiteral("--max-consecutive-reverts"), QStringLiteral("7"),
            QStringLiteral("--speedup-over-baseline=0"), QStringLiteral("--hours-per-kernel"),
            QStringLiteral("1.5"), QStringLiteral("--max-in-model-misses=0") });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("speedup_over_baseline +0 +\\(off\\)"))),
            qPrintable(r.out));
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("max_in_model_misses +0 +\\(off\\)"))),
            qPrintable(r.out));
        MoveOnRules expected;
        expected.maxConsecutiveReverts = 7;
        expected.roofPct = 80; // not given: unchanged
        expected.hoursPerKernel = 1.5;
        expected.speedupOverBaseline = 0;
        expected.maxInModelMisses = 0;
        QCOMPARE(rulesOnDisk(tmp.path()), expected);
        QString error;
        const RunSnapshotPtr s = RunLoader::load(tmp.path(), &error);
        QVERIFY2(s, qPrintable(error));
        QCOMPARE(s->moveOnChanges.size(), 1);
        QVERIFY2(s->moveOnChanges.first().by.contains(QStringLiteral("autokernel-cli")),
            qPrintable(s->moveOnChanges.first().by));
        QVERIFY(!QFileInfo::exists(RunLock::lockPath(tmp.path()))); // the writer was closed again

        const test::CliResult again = test::runCli({ QStringLiteral("rules"), tmp.path() });
        QCOMPARE(again.exitCode, 0);
        QVERIFY2(again.out.contains(QStringLiteral("Last changed")), qPrintable(again.out));
    }

    void queuesWhileAnotherProcessWrites()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(),
            nlohmann::json { { "model", "tiny.py" }, { "move_on", { { "roof_pct", 80 } } } }, {}));
        QString error;
        {
            auto writer = std::make_unique<RunLock>(tmp.path()); // the loop's process
            QVERIFY2(writer->acquire(&error), qPrintable(error));
            const test::CliResult r = test::runCli(
                { QStringLiteral("rules"), tmp.path(), QStringLiteral("--roof-pct"), QStringLiteral("70") });
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            QVERIFY2(r.out.contains(QStringLiteral("queued for the writer")), qPrintable(r.out));
            QCOMPARE(QDir(RequestQueue::dir(tmp.path())).entryList(QDir::Files).size(), 1);
            QCOMPARE(rulesOnDisk(tmp.path()).roofPct, 80.0); // not yet
        }
        // The writer applies it at its next boundary (here: on open).
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(rulesOnDisk(tmp.path()).roofPct, 70.0);
        QCOMPARE(rulesOnDisk(tmp.path()).maxConsecutiveReverts, 5);
        QVERIFY(store->state().moveOnChanges.constLast().by.contains(QStringLiteral("autokernel-cli")));
    }

    void badArgumentsExit2_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown flag") << QStringList { QStringLiteral("--roof"), QStringLiteral("80") }
                                      << QStringLiteral("unknown option '--roof'");
        QTest::newRow("not a number") << QStringList { QStringLiteral("--roof-pct"), QStringLiteral("high") }
                                      << QStringLiteral("roof_pct");
        QTest::newRow("fraction") << QStringList { QStringLiteral("--roof-pct"), QStringLiteral("0.9") }
                                  << QStringLiteral("roof_pct");
        QTest::newRow("not whole") << QStringList { QStringLiteral("--max-consecutive-reverts"),
            QStringLiteral("2.5") } << QStringLiteral("max_consecutive_reverts");
        QTest::newRow("negative in-model misses") << QStringList { QStringLiteral("--max-in-model-misses"),
            QStringLiteral("-1") } << QStringLiteral("max_in_model_misses");
        QTest::newRow("speedup below 1") << QStringList { QStringLiteral("--speedup-over-baseline"),
            QStringLiteral("0.5") } << QStringLiteral("speedup_over_baseline");
        QTest::newRow("missing value")
            << QStringList { QStringLiteral("--hours-per-kernel") } << QStringLiteral("needs a value");
        QTest::newRow("two dirs") << QStringList { QStringLiteral("other") } << QStringLiteral("usage");
    }

    void badArgumentsExit2()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(),
            nlohmann::json { { "model", "tiny.py" }, { "move_on", { { "roof_pct", 80 } } } }, {}));
        const QByteArray before = [&] {
            QFile f(QDir(tmp.path()).filePath(QStringLiteral("run.json")));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        const test::CliResult r = test::runCli(QStringList { QStringLiteral("rules"), tmp.path() } + args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QFile f(QDir(tmp.path()).filePath(QStringLiteral("run.json")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
    }

    void notARunExit2()
    {
        QTemporaryDir tmp;
        const test::CliResult r = test::runCli({ QStringLiteral("rules"), tmp.path() });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("not a run directory")), qPrintable(r.err));
        QCOMPARE(test::runCli({ QStringLiteral("rules") }).exitCode, 2);
    }
};

AK_TEST_CLASS(RulesCliTest)
#include "tst_rulescli.moc"
