#include "cpudevice.h"
#include "testregistry.h"

using namespace ak;

class CpuDeviceTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void describesHost()
    {
        const DeviceInfo d = cpuDevice();
        QVERIFY(d.available);
        QCOMPARE(d.vendor, QStringLiteral("cpu"));
        QVERIFY(d.name.startsWith(QStringLiteral("CPU: ")));
        QCOMPARE(d.peak(Precision::FP32), 0.0); // no invented CPU roof
    }
};

AK_TEST_CLASS(CpuDeviceTest)
#include "tst_cpudevice.moc"
