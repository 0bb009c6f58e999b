#include "devicedetector.h"
#include "testregistry.h"

using namespace ak;

class DeviceDetectorTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void noGpuHereIsNotAnError()
    {
        if (qEnvironmentVariableIsSet("AUTOKERNEL_EXPECT_GPU"))
            QSKIP("GPU machine");
        QStringList log;
        const DeviceInfo d = DeviceDetector::detect(0, &log);
        QVERIFY(!d.available);
        QVERIFY(!d.note.isEmpty());
        QVERIFY2(log.size() >= 2, qPrintable(log.join(QLatin1Char('\n')))); // each backend says why
        QVERIFY(log.first().startsWith(QStringLiteral("nvml: ")));
        QCOMPARE(d.summary(), QStringLiteral("No GPU detected"));
    }

    void torchFallbackUsesDatabase()
    {
        const nlohmann::json reply { { "available", true }, { "name", "NVIDIA H200" }, { "sm_count", 132 },
            { "compute_capability", "9.0" }, { "total_memory_bytes", 150120054784LL },
            { "l2_bytes", 52428800 } };
        const DeviceInfo d = DeviceDetector::fromTorch(reply);
        QVERIFY(d.available);
        QCOMPARE(d.detectedBy, QStringLiteral("torch"));
        QCOMPARE(d.databaseKey, QStringLiteral("h200"));
        QVERIFY(qAbs(d.bandwidthGBs - 4800) / 4800 < 0.05);
        QCOMPARE(d.smCount, 132);
        QVERIFY(d.peak(Precision::BF16) > 900);
    }

    void torchFallbackEstimatesUnknown()
    {
        const nlohmann::json reply { { "available", true }, { "name", "NVIDIA Future GPU" },
            { "sm_count", 100 }, { "compute_capability", "8.9" }, { "clock_khz", 2000000 } };
        const DeviceInfo d = DeviceDetector::fromTorch(reply);
        QVERIFY(d.estimated);
        QVERIFY(qAbs(d.peak(Precision::FP32) - 100 * 256 * 2.0e9 / 1e12) < 1e-9); // 51.2 TFLOP/s
        QCOMPARE(d.bandwidthGBs, 0.0); // no bus info: unknown, not guessed
        QVERIFY(d.note.contains(QStringLiteral("bandwidth")));
    }

    void torchWithoutCuda()
    {
        const DeviceInfo d = DeviceDetector::fromTorch(
            nlohmann::json { { "available", false }, { "reason", "torch.cuda.is_available() is False" } });
        QVERIFY(!d.available);
        QVERIFY(d.note.contains(QStringLiteral("is_available")));
    }
};

AK_TEST_CLASS(DeviceDetectorTest)
#include "tst_devicedetector.moc"
