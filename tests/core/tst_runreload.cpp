// RunLoader::reload: reading only what was appended to a live run's log gives what a full load gives,
// and anything but an append (run.json rewritten, the log cut short) falls back to a full load.
#include "experimentlog.h"
#include "moveonrules.h"
#include "runloader.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <cmath>

using namespace ak;

namespace {

const nlohmann::json kRunJson { { "model", "tiny.py" } };

// The parts of two snapshots a reader sees.
bool sameView(const RunSnapshot &a, const RunSnapshot &b)
{
    bool same = a.experiments == b.experiments && a.warnings == b.warnings && a.reviewMode == b.reviewMode
        && a.bestCommit == b.bestCommit && a.runJson == b.runJson && a.logBytes == b.logBytes
        && a.logLines == b.logLines && a.kernels.size() == b.kernels.size();
    for (int i = 0; same && i < a.kernels.size(); ++i)
        same = a.kernels[i].state == b.kernels[i].state && a.kernels[i].head == b.kernels[i].head
            && a.kernels[i].experimentCount == b.kernels[i].experimentCount
            && a.kernels[i].stateReason == b.kernels[i].stateReason;
    return same;
}

Experiment tryOnce(RunStore &store, const QString &kernel, int n, ExperimentStatus status)
{
    QString error;
    const Experiment e = store.beginExperiment(kernel, "BASE = " + QByteArray::number(n) + "\n",
        QStringLiteral("test"), QStringLiteral("try %1").arg(n), &error);
    Metrics m;
    m.correct = true;
    m.latencyUs = 100.0 / (n + 1);
    m.speedup = n + 1;
    if (e.id == 0 || !store.finishExperiment(e.id, status, m, QString(), &error))
        qWarning("%s", qPrintable(error));
    return e;
}

bool appendToLog(const QString &dir, const QByteArray &bytes)
{
    QFile f(QDir(dir).filePath(ExperimentLog::fileName()));
    return f.open(QIODevice::Append) && f.write(bytes) == bytes.size();
}

} // namespace

class RunReloadTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void appendedLinesGiveWhatAFullLoadGives()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson,
            { test::testKernel(1, QStringLiteral("matmul")),
                test::testKernel(2, QStringLiteral("softmax")) }));
        const RunSnapshotPtr before = RunLoader::load(tmp.path());
        QVERIFY(before && before->logBytes > 0);
        {
            QString error;
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            tryOnce(*store, QStringLiteral("01-matmul"), 1, ExperimentStatus::Kept);
            tryOnce(*store, QStringLiteral("02-softmax"), 2, ExperimentStatus::Reverted);
            QVERIFY(store->pin(QStringLiteral("02-softmax"), QStringLiteral("good enough"), &error));
            QVERIFY(store->setReviewMode(true, &error));
            tryOnce(*store, QStringLiteral("01-matmul"), 3, ExperimentStatus::Kept); // pending
        }
        const RunSnapshotPtr reloaded = RunLoader::reload(before);
        const RunSnapshotPtr full = RunLoader::load(tmp.path());
        QVERIFY(reloaded && full);
        QVERIFY(sameView(*reloaded, *full));
        QCOMPARE(reloaded->experiments.size(), before->experiments.size() + 3);
        QCOMPARE(reloaded->experiments.last().status, ExperimentStatus::Pending);
        QCOMPARE(reloaded->kernel(QStringLiteral("02-softmax"))->state, KernelState::Pinned);
        QVERIFY(reloaded->reviewMode);
        // The snapshot reloaded from is untouched (the window may still be showing it).
        QCOMPARE(before->experiments.size(), 2);
    }

    void aLineStillBeingWrittenWaitsForItsNewline()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path()));
        const RunSnapshotPtr before = RunLoader::load(tmp.path());
        QVERIFY(before);
        QVERIFY(appendToLog(tmp.path(), "{\"type\":\"kernel\",\"action\":\"pin\",\"kernel\":\"01-ma"));
        const RunSnapshotPtr half = RunLoader::reload(before);
        QVERIFY(half);
        QCOMPARE(half->logBytes, before->logBytes);
        QCOMPARE(half->kernels.first().state, before->kernels.first().state);
        QVERIFY(appendToLog(tmp.path(), "tmul\",\"reason\":\"r\",\"time\":\"2026-12-04T10:00:00Z\"}\n"));
        const RunSnapshotPtr whole = RunLoader::reload(half);
        QVERIFY(whole);
        QCOMPARE(whole->kernels.first().state, KernelState::Pinned);
        QVERIFY(sameView(*whole, *RunLoader::load(tmp.path())));
    }

    void aBadAppendedLineIsNamedByItsLineInTheFile()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path()));
        const RunSnapshotPtr before = RunLoader::load(tmp.path());
        QVERIFY(before && before->warnings.isEmpty());
        QVERIFY(appendToLog(tmp.path(), "not json\n"));
        const RunSnapshotPtr reloaded = RunLoader::reload(before);
        QVERIFY(reloaded);
        QCOMPARE(reloaded->warnings.size(), 1);
        QVERIFY2(reloaded->warnings.first().startsWith(
                     QStringLiteral("experiments.jsonl:%1:").arg(before->logLines + 1)),
            qPrintable(reloaded->warnings.first()));
        QVERIFY(sameView(*reloaded, *RunLoader::load(tmp.path())));
        // Reloading again keeps the warning once.
        QCOMPARE(RunLoader::reload(reloaded)->warnings.size(), 1);
    }

    void anythingButAnAppendIsReadWhole()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path()));
        const RunSnapshotPtr before = RunLoader::load(tmp.path());
        QVERIFY(before);
        {
            QString error;
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            MoveOnRules rules = before->config.moveOn;
            rules.roofPct = 42;
            QVERIFY2(store->setMoveOnRules(rules, &error), qPrintable(error)); // rewrites run.json
        }
        const RunSnapshotPtr afterRules = RunLoader::reload(before);
        QVERIFY(afterRules);
        QCOMPARE(afterRules->config.moveOn.roofPct, 42.0);
        QVERIFY(sameView(*afterRules, *RunLoader::load(tmp.path())));

        // The log cut short (a repair, a copy from elsewhere): read whole, not past its end.
        QFile log(QDir(tmp.path()).filePath(ExperimentLog::fileName()));
        QVERIFY(log.resize(before->logBytes / 2));
        const RunSnapshotPtr cut = RunLoader::reload(afterRules);
        QVERIFY(cut);
        QVERIFY(sameView(*cut, *RunLoader::load(tmp.path())));
        QVERIFY(cut->logBytes < before->logBytes);
    }

    void onlyTheTailIsRead()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path()));
        const RunSnapshotPtr before = RunLoader::load(tmp.path());
        QVERIFY(before);
        // Lines already read are not read again: an edit inside them (same size; the store never
        // does this) is not seen by reload, only by a full load.
        QFile log(QDir(tmp.path()).filePath(ExperimentLog::fileName()));
        QVERIFY(log.open(QIODevice::ReadWrite));
        QByteArray text = log.readAll();
        const qsizetype agent = text.indexOf("\"agent\":\"baseline\"");
        QVERIFY(agent >= 0);
        text[agent + 9] = 'X'; // "Xaseline"
        QVERIFY(log.seek(0) && log.write(text) == text.size());
        log.close();
        QVERIFY(appendToLog(tmp.path(), "\n"));
        const RunSnapshotPtr reloaded = RunLoader::reload(before);
        QVERIFY(reloaded);
        QCOMPARE(reloaded->experiments.first().agent, before->experiments.first().agent);
        QVERIFY(RunLoader::load(tmp.path())->experiments.first().agent != before->experiments.first().agent);
    }

    void experimentsCompareFieldByField()
    {
        Experiment a;
        a.id = 3;
        a.kernel = QStringLiteral("01-matmul");
        Experiment b = a;
        QVERIFY(a == b); // NaN metrics ("not measured") equal themselves
        b.metrics.latencyUs = 12;
        QVERIFY(a != b);
        b = a;
        b.status = ExperimentStatus::Rejected;
        QVERIFY(a != b);
        b = a;
        b.failure = QStringLiteral("slower");
        QVERIFY(a != b);
        b = a;
        b.cost = 0.5;
        QVERIFY(a != b);
    }
};

AK_TEST_CLASS(RunReloadTest)
#include "tst_runreload.moc"
