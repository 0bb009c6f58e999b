#include "loop/harnessclient.h"
#include "testregistry.h"

#include <QDir>

using namespace ak;
using json = nlohmann::json;

// The reply → BenchResult mapping and the request shape, without a worker.
class HarnessClientTest : public QObject
{
    Q_OBJECT
private:
    static WorkerReply okReply(const json &result)
    {
        WorkerReply r;
        r.status = WorkerReply::Status::Ok;
        r.result = result;
        return r;
    }

private Q_SLOTS:
    void correctResultCarriesMetrics()
    {
        const BenchResult r = HarnessClient::fromReply(okReply(
            { { "correct", true }, { "status", "ok" }, { "failure", "" }, { "kernel_type", "softmax" },
                { "stages", { { { "name", "smoke" }, { "passed", true }, { "detail", "1 case" } } } },
                { "latency_us", 12.5 }, { "ref_latency_us", 25.0 }, { "speedup", 2.0 }, { "tflops", 0.1 },
                { "gbps", 800.0 }, { "pct_peak", nullptr }, { "bound", "memory" }, { "noise_pct", 1.5 },
                { "seed", 42 } }));
        QCOMPARE(r.status, BenchStatus::Ok);
        QVERIFY(r.correct);
        QVERIFY(r.metrics.correct);
        QCOMPARE(r.metrics.latencyUs, 12.5);
        QCOMPARE(r.metrics.speedup, 2.0);
        QVERIFY(!Metrics::has(r.metrics.pctPeak)); // null = not known
        QCOMPARE(r.metrics.bound, QStringLiteral("memory"));
        QCOMPARE(r.stages.size(), 1);
        QCOMPARE(r.stages.first().name, QStringLiteral("smoke"));
        QVERIFY(r.stages.first().passed);

        const json j = r.toJson();
        QVERIFY(j["pct_peak"].is_null()); // listed, not invented
        QCOMPARE(j["latency_us"].get<double>(), 12.5);
        QCOMPARE(j["seed"].get<int>(), 42); // extra harness fields pass through
        QCOMPARE(j["status"].get<std::string>(), std::string("ok"));
    }

    void metricsGroupedUnderMetricsAreRead()
    {
        const BenchResult r = HarnessClient::fromReply(
            okReply({ { "correct", true }, { "status", "ok" }, { "metrics", { { "latency_us", 3.0 } } } }));
        QCOMPARE(r.metrics.latencyUs, 3.0);
    }

    void kernelTextReachesNobodyRaw()
    {
        // A kernel's failure text with a terminal escape and a bidi override (#39): made visible.
        const std::string evil = "max error \x1b[2Jcleared \xe2\x80\xae\x1b]0;title\x07";
        WorkerReply w = okReply(
            { { "correct", false }, { "status", "incorrect" }, { "failure", evil }, { "traceback", evil },
                { "stages",
                    json::array({ { { "name", "smoke" }, { "passed", false }, { "detail", evil } } }) } });
        w.stderrTail = QString::fromStdString(evil);
        const BenchResult r = HarnessClient::fromReply(w);
        for (const QString &text : { r.failure, r.traceback, r.stderrTail, r.stages.value(0).detail }) {
            QVERIFY2(
                !text.contains(QChar(0x1b)) && !text.contains(QChar(0x202e)) && !text.contains(QChar(0x07)),
                qPrintable(text));
            QVERIFY2(text.contains(QLatin1String("\\x1b[2Jcleared")), qPrintable(text));
        }
    }

    void okWithoutCorrectIsIncorrect()
    {
        const BenchResult r = HarnessClient::fromReply(okReply({ { "correct", false }, { "status", "ok" },
            { "stages", { { { "name", "sizes" }, { "passed", false }, { "detail", "max |err| 0.5" } } } } }));
        QCOMPARE(r.status, BenchStatus::Incorrect);
        QVERIFY(!r.correct);
        QCOMPARE(r.failure, QStringLiteral("stage 'sizes' failed: max |err| 0.5"));
        const json j = r.toJson();
        QVERIFY(!j.contains("latency_us")); // nothing measured, nothing listed
        QCOMPARE(j["correct"].get<bool>(), false);
    }

    void workerOutcomesMap()
    {
        WorkerReply w;
        w.status = WorkerReply::Status::Timeout;
        w.error = QStringLiteral("'bench' did not finish within 5 s");
        BenchResult r = HarnessClient::fromReply(w);
        QCOMPARE(r.status, BenchStatus::Timeout);
        QVERIFY(!r.environmentError);
        QCOMPARE(r.failure, w.error);

        w.status = WorkerReply::Status::Crash;
        QCOMPARE(HarnessClient::fromReply(w).status, BenchStatus::Crash);

        // The harness raising (or failing to import) is not the kernel's fault.
        w.status = WorkerReply::Status::Error;
        w.error = QStringLiteral("ImportError: op 'bench' is not available");
        r = HarnessClient::fromReply(w);
        QCOMPARE(r.status, BenchStatus::Error);
        QVERIFY(r.environmentError);
        QVERIFY(r.failure.contains(QStringLiteral("op 'bench' is not available")));

        w.status = WorkerReply::Status::Unavailable;
        QVERIFY(HarnessClient::fromReply(w).environmentError);
    }

    void harnessCanBlameTheMachine()
    {
        const BenchResult r = HarnessClient::fromReply(okReply({ { "correct", false }, { "status", "error" },
            { "failure", "no CUDA device" }, { "environment_error", true } }));
        QCOMPARE(r.status, BenchStatus::Error);
        QVERIFY(r.environmentError);
        const BenchResult k = HarnessClient::fromReply(okReply({ { "correct", false }, { "status", "error" },
            { "failure", "kernel.py declares no KERNEL_TYPE" } }));
        QVERIFY(!k.environmentError);
    }

    void requestArgsShape()
    {
        HarnessClient client(nullptr);
        client.setDefaultTimeLimitSec(42);
        BenchRequest req;
        req.kernelPath = QStringLiteral("relative/kernel.py");
        req.device = QStringLiteral("cuda");
        req.dtype = QStringLiteral("bf16");
        req.deviceInfo.name = QStringLiteral("NVIDIA H200");
        req.deviceInfo.bandwidthGBs = 4800;
        req.deviceInfo.peakTflops[size_t(Precision::BF16)] = 989;
        req.extra = { { "seed", 7 } };
        const json a = client.requestArgs(req);
        QCOMPARE(QString::fromStdString(a["kernel_path"].get<std::string>()),
            QDir::current().absoluteFilePath(QStringLiteral("relative/kernel.py")));
        QCOMPARE(a["device"].get<std::string>(), std::string("cuda"));
        QCOMPARE(a["dtype"].get<std::string>(), std::string("bf16"));
        QCOMPARE(a["time_limit_s"].get<int>(), 42);
        QCOMPARE(a["peaks"]["tflops"]["bf16"].get<double>(), 989.0);
        QCOMPARE(a["peaks"]["tflops"]["fp32"].get<double>(), 0.0);
        QCOMPARE(a["peaks"]["bandwidth_gbs"].get<double>(), 4800.0);
        QCOMPARE(a["seed"].get<int>(), 7);
        req.dtype.clear();
        QVERIFY(client.requestArgs(req)["dtype"].is_null());
    }
};

AK_TEST_CLASS(HarnessClientTest)
#include "tst_harnessclient.moc"
