// The in-model checks of keeps (#38 item 5): inmodel.json as the loop writes it through the run store,
// what a reader (the window, `status`) gets back, and the streak the move-on rule reads.
#include "experimentlog.h"
#include "gitrepo.h"
#include "inmodelcheck.h"
#include "runloader.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QFile>
#include <QTemporaryDir>

using namespace ak;
using nlohmann::json;

namespace {

InModelCheck check(const QString &kernel, int experiment, double effect, bool harnessWin)
{
    QString error;
    const json reply { { "kernel", kernel.toStdString() }, { "plugged", true },
        { "parity", { { "ok", true } } }, { "effect_pct", effect }, { "limit_pct", 1.5 },
        { "seconds", 2.0 } };
    InModelCheck c = *InModelCheck::fromReply(reply, &error);
    c.experiment = experiment;
    c.harnessWin = harnessWin;
    c.when = QDateTime::currentDateTimeUtc();
    return c;
}

} // namespace

class InModelCheckTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void positiveIsRecomputedNotTrusted()
    {
        QString error;
        // The effect must beat the noise it came with; a reply claiming "positive" is not believed.
        const json inside { { "kernel", "01-matmul" }, { "plugged", true }, { "parity", { { "ok", true } } },
            { "effect_pct", 1.2 }, { "limit_pct", 1.5 }, { "positive", true } };
        QVERIFY(!InModelCheck::fromReply(inside, &error)->positive);
        json beyond = inside;
        beyond["effect_pct"] = 3.0;
        QVERIFY(InModelCheck::fromReply(beyond, &error)->positive);
        json broken = beyond;
        broken["parity"]["ok"] = false;
        QVERIFY(!InModelCheck::fromReply(broken, &error)->positive);
        json untimed = inside;
        untimed["effect_pct"] = nullptr;
        QVERIFY(std::isnan(InModelCheck::fromReply(untimed, &error)->effectPct));
        QVERIFY(!InModelCheck::fromReply(json { { "plugged", true } }, &error));
        QVERIFY2(error.contains(QLatin1String("\"kernel\"")), qPrintable(error));
    }

    void missesInARowCountOnlyHarnessWins()
    {
        InModelChecks all;
        const QString k = QStringLiteral("01-matmul");
        all.checks << check(k, 3, 0.2, true) << check(QStringLiteral("02-gelu"), 4, 0.1, true);
        QCOMPARE(all.missesInARow(k), 1);
        all.checks << check(k, 5, -3.0, false); // lost to PyTorch in the harness: neither counts nor ends
        QCOMPARE(all.missesInARow(k), 1);
        all.checks << check(k, 6, 0.5, true);
        QCOMPARE(all.missesInARow(k), 2);
        InModelCheck tiny = check(k, 8, 0.1, true); // predicted below the noise: cannot show, no miss
        tiny.expectedPct = 0.2;
        all.checks << tiny;
        QCOMPARE(all.missesInARow(k), 2);
        QVERIFY(!tiny.miss() && !tiny.visibleWin());
        all.checks << check(k, 7, 4.0, true); // seen in the model: the streak ends
        QCOMPARE(all.missesInARow(k), 0);
        QCOMPARE(all.latest(k)->experiment, 7);
        QCOMPARE(all.count(k), 5);
        QCOMPARE(all.seconds(), 12.0);
        QVERIFY(!all.latest(QStringLiteral("03-none")));
    }

    void recordedThroughTheStoreAndReadBack()
    {
        QTemporaryDir dir;
        QVERIFY(test::makeRunDir(dir.path()));
        QString error;
        const RunSnapshotPtr before = RunLoader::load(dir.path(), &error);
        QVERIFY2(before, qPrintable(error));
        QVERIFY(before->inModel.isEmpty());
        {
            auto store = RunStore::open(dir.path(), &error);
            QVERIFY2(store, qPrintable(error));
            QVERIFY2(store->recordInModelCheck(check(QStringLiteral("01-matmul"), 2, 3.25, true), &error),
                qPrintable(error));
            QCOMPARE(store->state().inModel.checks.size(), 1);
        }
        // A live reader's reload sees it: the check appended a log line.
        const RunSnapshotPtr after = RunLoader::reload(before, &error);
        QVERIFY2(after, qPrintable(error));
        QVERIFY2(after->warnings.isEmpty(), qPrintable(after->warnings.join(QLatin1Char('\n'))));
        const InModelCheck *c = after->inModel.latest(QStringLiteral("01-matmul"));
        QVERIFY(c);
        QCOMPARE(c->effectPct, 3.25);
        QCOMPARE(c->experiment, 2);
        QVERIFY(c->positive && c->harnessWin);
        // A second check appends; a reopened store keeps both (nothing already recorded is lost).
        {
            auto store = RunStore::open(dir.path(), &error);
            QVERIFY2(store, qPrintable(error));
            QCOMPARE(store->state().inModel.checks.size(), 1);
            QVERIFY(store->recordInModelCheck(check(QStringLiteral("01-matmul"), 3, 0.1, true), &error));
            // Committed on the best branch like verification.json.
            QVERIFY(store->repo()
                        .readBlob(store->bestCommit(), InModelChecks::fileName())
                        .contains("\"experiment\": 3"));
        }
        const RunSnapshotPtr again = RunLoader::load(dir.path(), &error);
        QCOMPARE(again->inModel.checks.size(), 2);
        QCOMPARE(again->inModel.missesInARow(QStringLiteral("01-matmul")), 1);
        QVERIFY(QFile::exists(QDir(dir.path()).filePath(QStringLiteral("verification.json"))) == false);
    }

    void aBrokenFileIsAWarningNotALostRun()
    {
        QTemporaryDir dir;
        QVERIFY(test::makeRunDir(dir.path()));
        QFile f(QDir(dir.path()).filePath(InModelChecks::fileName()));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"autokernel-inmodel\", \"checks\": [{\"kernel\": 3}]}");
        f.close();
        QString error;
        const RunSnapshotPtr s = RunLoader::load(dir.path(), &error);
        QVERIFY2(s, qPrintable(error));
        QVERIFY(s->inModel.isEmpty());
        QVERIFY2(s->warnings.join(QLatin1Char('\n')).contains(QLatin1String("inmodel.json: checks[0]")),
            qPrintable(s->warnings.join(QLatin1Char('\n'))));
    }
};

AK_TEST_CLASS(InModelCheckTest)
#include "tst_inmodelcheck.moc"
