#include "deviceinfo.h"
#include "enumnames.h"
#include "experiment.h"
#include "kernelrecord.h"
#include "moveonrules.h"
#include "testregistry.h"

using namespace ak;

class ValueTypesTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void statusNamesRoundTrip()
    {
        for (ExperimentStatus s :
            { ExperimentStatus::Running, ExperimentStatus::Kept, ExperimentStatus::Reverted,
                ExperimentStatus::Failed, ExperimentStatus::Crashed, ExperimentStatus::Timeout,
                ExperimentStatus::Pending, ExperimentStatus::Rejected, ExperimentStatus::Baseline }) {
            ExperimentStatus parsed = ExperimentStatus::Running;
            QVERIFY2(parseStatus(statusName(s), &parsed), qPrintable(statusName(s)));
            QCOMPARE(parsed, s);
        }
        QVERIFY(!parseStatus(QStringLiteral("kept-ish"), nullptr));
    }

    // The one pattern every enum's names use: a value's first row is its name, later rows are
    // accepted spellings, an unknown token leaves *out alone, and the list has each name once.
    void enumTokensBothWays()
    {
        enum class Colour { Red, Green };
        static constexpr EnumToken<Colour> names[]
            = { { Colour::Red, "red" }, { Colour::Green, "green" }, { Colour::Green, "verde" } };
        QCOMPARE(tokenOf(names, Colour::Green), QStringLiteral("green"));
        Colour c = Colour::Red;
        QVERIFY(fromToken(names, QStringLiteral("verde"), &c));
        QCOMPARE(c, Colour::Green);
        QVERIFY(!fromToken(names, QStringLiteral("blue"), &c));
        QCOMPARE(c, Colour::Green);
        QCOMPARE(tokensOf(names), QStringList({ QStringLiteral("red"), QStringLiteral("green") }));

        // The tables the files use: every value named, and distinct names.
        QStringList kernelStates;
        for (KernelState k : { KernelState::Waiting, KernelState::Active, KernelState::Pinned,
                 KernelState::Skipped, KernelState::Done, KernelState::Unpluggable })
            kernelStates << kernelStateName(k);
        QCOMPARE(kernelStates.join(QLatin1Char(' ')),
            QStringLiteral("waiting active pinned skipped done unpluggable"));
        QStringList reasons;
        for (MoveOnReason r : { MoveOnReason::None, MoveOnReason::NearRoof, MoveOnReason::SpeedupReached,
                 MoveOnReason::ConsecutiveReverts, MoveOnReason::TimeBudget, MoveOnReason::NotInModel })
            reasons << moveOnReasonName(r);
        QCOMPARE(reasons.join(QLatin1Char(' ')),
            QStringLiteral("none near_roof speedup_reached consecutive_reverts time_budget not_in_model"));
        QStringList outcomes;
        for (ExperimentOutcome o : { ExperimentOutcome::Baseline, ExperimentOutcome::Kept,
                 ExperimentOutcome::Pending, ExperimentOutcome::Rejected, ExperimentOutcome::Reverted,
                 ExperimentOutcome::Running, ExperimentOutcome::Failed })
            outcomes << outcomeName(o);
        QCOMPARE(outcomes.join(QLatin1Char(' ')),
            QStringLiteral("baseline kept pending rejected reverted running failed"));
        QCOMPARE(precisionName(Precision::FP16), QStringLiteral("fp16")); // "half" is read, never written
        QVERIFY(precisionName(Precision::Count).isEmpty());
    }

    void precisionParsing()
    {
        Precision p = Precision::FP32;
        QVERIFY(parsePrecision(QStringLiteral("bfloat16"), &p));
        QCOMPARE(p, Precision::BF16);
        QVERIFY(parsePrecision(QStringLiteral(" FP16 "), &p));
        QCOMPARE(p, Precision::FP16);
        QVERIFY(!parsePrecision(QStringLiteral("int4"), &p));
    }

    void summaryNamesMissingGpu()
    {
        DeviceInfo none;
        QCOMPARE(none.summary(), QStringLiteral("No GPU detected"));
        DeviceInfo h;
        h.available = true;
        h.vendor = QStringLiteral("nvidia");
        h.name = QStringLiteral("NVIDIA H200");
        h.smCount = 132;
        h.bandwidthGBs = 4800;
        h.peakTflops[size_t(Precision::BF16)] = 989;
        QCOMPARE(h.summary(), QStringLiteral("NVIDIA H200 · 132 SMs · 4.80 TB/s · bf16 989 TFLOP/s"));
    }
};

AK_TEST_CLASS(ValueTypesTest)
#include "tst_valuetypes.moc"
