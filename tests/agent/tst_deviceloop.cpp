// DeviceLoop: a device name becomes the harness's device, the loop's label, the device's facts and
// the worker's pinning; a session whose agent cannot be made stops as a failure, on every device.
#include "experimentlooprig.h"
#include "loop/deviceloop.h"
#include "testregistry.h"

#include <QFile>

using namespace ak;
using namespace ak::test;

class DeviceLoopTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void deviceNameMakesTheConfiguration()
    {
        DeviceLoop::Setup s;
        s.device = QStringLiteral("cuda:1");
        s.runDevice.available = true;
        s.runDevice.vendor = QStringLiteral("nvidia");
        s.runDevice.name = QStringLiteral("NVIDIA H200 (from the profile)");
        s.maxKernels = 3;
        s.quickBench = true;
        ExperimentLoopConfig c = DeviceLoop::configFor(s);
        QCOMPARE(c.label, QStringLiteral("cuda:1"));
        QCOMPARE(c.benchDevice, QStringLiteral("cuda"));
        QCOMPARE(c.maxKernels, 3);
        QVERIFY(c.quickBench);
        QVERIFY(c.device.available); // detected, or what profiling found
        if (!QFile::exists(QStringLiteral("/dev/nvidiactl"))) // no GPU here: the profile's facts
            QCOMPARE(c.device.name, s.runDevice.name);

        s.device = QStringLiteral("cpu");
        c = DeviceLoop::configFor(s);
        QCOMPARE(c.benchDevice, QStringLiteral("cpu"));
        QCOMPARE(c.device.vendor, QStringLiteral("cpu"));
    }

    void workerIsPinnedToItsGpu()
    {
        QCOMPARE(DeviceLoop::environmentFor(QStringLiteral("cuda:2"))
                     .value(QStringLiteral("CUDA_VISIBLE_DEVICES")),
            QStringLiteral("2"));
        const QProcessEnvironment all = QProcessEnvironment::systemEnvironment();
        QCOMPARE(
            DeviceLoop::environmentFor(QStringLiteral("cuda")).value(QStringLiteral("CUDA_VISIBLE_DEVICES")),
            all.value(QStringLiteral("CUDA_VISIBLE_DEVICES")));
    }

    void agentThatCannotBeMadeStopsTheSession()
    {
        CREATE_RIG(r, kNoRules);
        DeviceLoop::Setup s;
        s.device = QStringLiteral("cpu");
        s.agent.kind = AgentConfig::Kind::Command; // with no command: cannot be made
        DeviceLoop loop(r.session.get(), s);
        QCOMPARE(loop.run(), ExperimentLoop::Step::Stopped);
        QVERIFY(r.session->failed());
        QVERIFY2(
            r.session->endReason().startsWith(QStringLiteral("agent: ")), qPrintable(r.session->endReason()));
        loop.stop(); // after the end: nothing to cancel, no crash
    }
};

AK_TEST_CLASS(DeviceLoopTest)
#include "tst_deviceloop.moc"
