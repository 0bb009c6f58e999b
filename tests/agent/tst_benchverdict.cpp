// BenchVerdict::of alone: what the loop makes of each kind of bench result, against a real run
// snapshot (a rig whose baseline was measured at 100 us, 0.5x over PyTorch).
#include "experimentlooprig.h"
#include "loop/benchverdict.h"
#include "secrets.h"
#include "testregistry.h"

using namespace ak;
using namespace ak::test;

class BenchVerdictTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void eachOutcome()
    {
        CREATE_RIG(r, kNoRules);
        r.bench.results.enqueue(ok(100));
        STEP(r); // the baseline
        const RunSnapshot run = r.state();

        BenchVerdict v = BenchVerdict::of(ok(80), run, kA, false);
        QCOMPARE(v.status, ExperimentStatus::Kept);
        QVERIFY(v.text.isEmpty());
        QVERIFY(!v.environmentError);

        v = BenchVerdict::of(ok(120), run, kA, false);
        QCOMPARE(v.status, ExperimentStatus::Reverted);
        QVERIFY2(v.text.startsWith(QStringLiteral("20.0% slower than the best (100.00 -> 120.00 us)")),
            qPrintable(v.text));

        // Faster, but not above the noise of either measurement.
        v = BenchVerdict::of(ok(97, 5.0), run, kA, false);
        QCOMPARE(v.status, ExperimentStatus::Reverted);
        QVERIFY2(
            v.text.contains(QStringLiteral("3.0% faster")) && v.text.contains(QStringLiteral("noise 5.0%")),
            qPrintable(v.text));

        v = BenchVerdict::of(
            bad(BenchStatus::Incorrect, QStringLiteral("stage smoke: outside tolerance")), run, kA, false);
        QCOMPARE(v.status, ExperimentStatus::Failed);
        QCOMPARE(v.text, QStringLiteral("stage smoke: outside tolerance"));
        QCOMPARE(BenchVerdict::of(bad(BenchStatus::Timeout, QString()), run, kA, false).status,
            ExperimentStatus::Timeout);
        QCOMPARE(BenchVerdict::of(bad(BenchStatus::Crash, QString()), run, kA, false).text,
            QStringLiteral("crash"));

        v = BenchVerdict::of(bad(BenchStatus::Error, QStringLiteral("no worker"), true), run, kA, false);
        QCOMPARE(v.status, ExperimentStatus::Failed);
        QVERIFY(v.environmentError);
        QCOMPARE(v.text, QStringLiteral("harness problem (not the kernel): no worker"));

        // A stop during the bench: a failed bench is the stop's, not the kernel's; a finished one counts.
        v = BenchVerdict::of(bad(BenchStatus::Crash, QStringLiteral("killed")), run, kA, true);
        QCOMPARE(v.status, ExperimentStatus::Crashed);
        QVERIFY(v.text.startsWith(QStringLiteral("interrupted")));
        QVERIFY(v.interrupted);
        QVERIFY(!v.environmentError);
        QCOMPARE(BenchVerdict::of(ok(80), run, kA, true).status, ExperimentStatus::Kept);
        QVERIFY(!BenchVerdict::of(ok(80), run, kA, true).interrupted);

        BenchResult flagged = ok(80);
        flagged.flags << QStringLiteral("beyond the roof");
        v = BenchVerdict::of(flagged, run, kA, false);
        QCOMPARE(v.status, ExperimentStatus::Pending);
        QCOMPARE(v.text, QStringLiteral("held for review: beyond the roof"));
        // 5x over PyTorch against a history of 0.5x: held; a slower one is reverted, not held.
        QCOMPARE(BenchVerdict::of(ok(10), run, kA, false).status, ExperimentStatus::Pending);
        QCOMPARE(BenchVerdict::of(ok(150), run, kA, false).status, ExperimentStatus::Reverted);
    }

    void failureNamesTheExceptionAndHidesSecrets()
    {
        BenchResult r = bad(BenchStatus::Error, QStringLiteral("kernel_fn raised"));
        r.traceback = QStringLiteral(
            "Traceback (most recent call last):\n  File \"kernel.py\"\nValueError: bad shape\n");
        QCOMPARE(BenchVerdict::failureOf(r), QStringLiteral("kernel_fn raised (ValueError: bad shape)"));
        const QString key = QStringLiteral("sk-verdict-test-0123456789abcdef");
        secrets::registerValue(key);
        r.traceback.clear();
        r.failure = QStringLiteral("leaked ") + key;
        QVERIFY(!BenchVerdict::failureOf(r).contains(key));
    }
};

AK_TEST_CLASS(BenchVerdictTest)
#include "tst_benchverdict.moc"
