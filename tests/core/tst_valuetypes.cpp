#include "deviceinfo.h"
#include "experiment.h"
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
