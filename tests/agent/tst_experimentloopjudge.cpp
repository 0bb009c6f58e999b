// What the loop does with the judge's verdicts beyond keep and revert: results worth a person's look
// are held for review, secrets never reach the record, and the sandbox the kernel ran in and what the
// precision probe found are recorded.
#include "experimentlooprig.h"
#include "secrets.h"
#include "testregistry.h"

using namespace ak;
using namespace ak::test;

class ExperimentLoopJudgeTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void flaggedResultIsHeldForReview()
    {
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(ok(100));
        STEP(r);
        const QString head = r.kernel(kA).head;
        BenchResult flagged = ok(80);
        flagged.flags << QStringLiteral("3.1e+03 GB/s is beyond the CPU's measured copy rate of 900 GB/s for "
                                        "this working set: verify by hand");
        r.bench.results.enqueue(flagged);
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Pending);
        QVERIFY2(r.last().failure.startsWith(QStringLiteral("held for review: 3.1e+03 GB/s")),
            qPrintable(r.last().failure));
        QCOMPARE(r.kernel(kA).head, head); // not kept until a person accepts it
        QCOMPARE(r.head(kA), starter());
    }

    void speedupFarBeyondTheOpsHistoryIsHeld()
    {
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(ok(100)); // baseline: 0.5x over PyTorch
        STEP(r);
        r.bench.results.enqueue(ok(40)); // 1.25x: ordinary progress
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        r.bench.results.enqueue(ok(10)); // 5x: four times the best softmax so far
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Pending);
        QVERIFY2(r.last().failure.contains(
                     QStringLiteral("more than 3x the best any softmax kernel reached in this run (1.25x)")),
            qPrintable(r.last().failure));
    }

    void largeSpeedupIsKeptWhenTheOpAlreadyReachedIt()
    {
        // A starter 12.5x over an unfused eager reference: improving on it is ordinary progress, not
        // a reason to hold every step for a person.
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(ok(4)); // baseline: 12.5x
        STEP(r);
        r.bench.results.enqueue(ok(3.5)); // 14.3x
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Kept);
        r.bench.results.enqueue(ok(1)); // 50x: four times the best, held
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Pending);
    }

    void largeSpeedupWithoutHistoryIsHeld()
    {
        CREATE_RIG(r, kNoRules);
        BenchResult baseline = ok(100);
        baseline.metrics.speedup = std::nan(""); // a reference that could not be timed
        r.bench.results.enqueue(baseline);
        STEP(r);
        r.bench.results.enqueue(ok(4)); // 12.5x, nothing of this op measured before
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Pending);
        QVERIFY2(r.last().failure.contains(
                     QStringLiteral("speedup 12.5x over the PyTorch reference is above 10x")),
            qPrintable(r.last().failure));
    }

    void secretsNeverReachTheRecord()
    {
        const QString key = QStringLiteral("sk-loop-redaction-test-0123456789");
        secrets::registerValue(key);
        CREATE_RIG(r, kNoRules);
        STEP(r);
        r.bench.results.enqueue(
            bad(BenchStatus::Incorrect, QStringLiteral("smoke: kernel_fn raised RuntimeError: %1").arg(key)));
        STEP(r);
        QCOMPARE(r.last().status, ExperimentStatus::Failed);
        QVERIFY2(!r.last().failure.contains(key), qPrintable(r.last().failure));
        QVERIFY(r.last().failure.contains(QStringLiteral("[redacted]")));
        for (const QString &m : std::as_const(r.messages))
            QVERIFY2(!m.contains(key), qPrintable(m));
        QVERIFY(!readFile(r.dir + QStringLiteral("/experiments.jsonl")).contains(key.toUtf8()));
        QVERIFY(!r.store().repo().messageOf(r.last().commit).contains(key));
    }

    void sandboxIsRecordedAndItsAbsenceAnnounced()
    {
        CREATE_RIG(r, kNoRules);
        BenchResult base = ok(100);
        base.metrics.sandbox = QStringLiteral("bubblewrap");
        r.bench.results.enqueue(base);
        STEP(r);
        BenchResult weak = ok(90);
        weak.metrics.sandbox
            = QStringLiteral("process (bubblewrap (bwrap) is not installed: apt install bubblewrap)");
        r.bench.results.enqueue(weak);
        STEP(r);
        QCOMPARE(r.last().metrics.sandbox, weak.metrics.sandbox);
        QVERIFY(r.messages.filter(QStringLiteral("kernels run in a bubblewrap sandbox")).size() == 1);
        QVERIFY2(
            r.messages.filter(QStringLiteral("WARNING: kernels run without a sandbox: process")).size() == 1,
            qPrintable(r.messages.join(QLatin1Char('\n'))));
        const int id = r.last().id;
        QVERIFY(r.reopen()); // the run format carries it
        QCOMPARE(r.experiment(id).metrics.sandbox, weak.metrics.sandbox);
    }

    void reducedPrecisionIsAskedPerRunAndRecorded()
    {
        // Refused by default: the judge is not asked to keep a precision shortcut (#43 item 5).
        CREATE_RIG(r, kNoRules);
        STEP(r);
        QVERIFY(!r.bench.requests.last().extra.contains("allow_reduced_precision"));
        QString error;
        QVERIFY2(r.store().setAllowReducedPrecision(true, &error), qPrintable(error));
        BenchResult flagged = ok(80);
        flagged.metrics.precision = QStringLiteral("reduced_accumulation (float16), allowed by the run");
        r.bench.results.enqueue(flagged);
        STEP(r);
        QVERIFY(r.bench.requests.last().extra.value("allow_reduced_precision", false));
        QCOMPARE(r.last().metrics.precision, flagged.metrics.precision);
        const int id = r.last().id;
        QVERIFY(r.reopen()); // experiments.jsonl carries it
        QCOMPARE(r.experiment(id).metrics.precision, flagged.metrics.precision);
    }
};

AK_TEST_CLASS(ExperimentLoopJudgeTest)
#include "tst_experimentloopjudge.moc"
