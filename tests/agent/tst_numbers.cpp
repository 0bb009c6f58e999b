#include "deviceinfo.h"
#include "experimentlog.h"
#include "kernelrecord.h"
#include "loop/harnessclient.h"
#include "loop/modelverifier.h"
#include "runsnapshot.h"
#include "testregistry.h"

#include <nlohmann/json.hpp>

using namespace ak;
using json = nlohmann::json;

// What each number is against (#43 items 1, 2, 7; docs/numbers.md): the measured roofs reach the
// judge beside the spec ones, the judge's identity and the compiled-PyTorch baseline come back with a
// result and survive experiments.jsonl, and "PyTorch wins" is decided against the best PyTorch.
class NumbersTest : public QObject
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

    static DeviceInfo h100()
    {
        DeviceInfo d;
        d.name = QStringLiteral("NVIDIA H100 80GB HBM3");
        d.bandwidthGBs = 3350;
        d.peakTflops[size_t(Precision::BF16)] = 989;
        return d;
    }

private Q_SLOTS:
    void measuredRoofsTravelToTheJudgeBesideTheSpec()
    {
        DeviceInfo d = h100();
        QVERIFY(!HarnessClient::peaksJson(d).contains("measured")); // not measured: spec only
        d.measured = MeasuredRoofs::fromJson(json::parse(
            R"({"bandwidth_gbs": 3010.4, "tflops": {"bf16": 701.2}, "key": "name=H100 | dtype=bf16",
                "measured_at": "2026-12-07T13:00:00Z", "cached": true})"));
        QVERIFY(d.measured.known());
        QVERIFY(d.measured.cached);
        const json peaks = HarnessClient::peaksJson(d);
        QCOMPARE(peaks["bandwidth_gbs"].get<double>(), 3350.0); // the spec stays the physical limit
        QCOMPARE(peaks["measured"]["bandwidth_gbs"].get<double>(), 3010.4);
        QCOMPARE(peaks["measured"]["tflops"]["bf16"].get<double>(), 701.2);
        QVERIFY(!peaks["measured"]["tflops"].contains("fp32")); // not measured is not 0 measured

        // run.json's device keeps them (a recording of the run carries what % of roof was against).
        const DeviceInfo back = DeviceInfo::fromJson(d.toJson());
        QCOMPARE(back.measured.bandwidthGBs, 3010.4);
        QCOMPARE(back.measured.tflops[size_t(Precision::BF16)], 701.2);
        QCOMPARE(back.measured.key, QStringLiteral("name=H100 | dtype=bf16"));
        QVERIFY(!DeviceInfo::fromJson(h100().toJson()).measured.known());
        QVERIFY2(
            d.measured.summary().startsWith(QStringLiteral("copy 3010 GB/s · bf16 matmul 701.2 TFLOP/s")),
            qPrintable(d.measured.summary()));
    }

    void aResultNamesItsJudgeAndBothBaselines()
    {
        const BenchResult r = HarnessClient::fromReply(okReply({ { "correct", true }, { "status", "ok" },
            { "latency_us", 10.0 }, { "ref_latency_us", 20.0 }, { "speedup", 2.0 }, { "pct_peak", 91.0 },
            { "pct_peak_spec", 81.8 }, { "roof", "measured" }, { "compile_latency_us", 8.0 },
            { "compile_speedup", 0.8 }, { "compile", { { "note", "max-autotune (compiled in 31.0 s)" } } },
            { "judge", { { "version", "0123456789ab" }, { "isolation", "bubblewrap+cgroup v2" } } },
            { "isolation", { { "sandbox", "bubblewrap" } } } }));
        const Metrics &m = r.metrics;
        QCOMPARE(m.pctPeakSpec, 81.8);
        QCOMPARE(m.roof, QStringLiteral("measured"));
        QCOMPARE(m.compileLatencyUs, 8.0);
        QCOMPARE(m.compileNote, QStringLiteral("max-autotune (compiled in 31.0 s)"));
        QCOMPARE(m.judge, QStringLiteral("0123456789ab"));
        QCOMPARE(m.isolation, QStringLiteral("bubblewrap+cgroup v2"));
        QCOMPARE(m.bestTorchSpeedup(), 0.8); // compiled PyTorch is the faster one

        // experiments.jsonl keeps every one of them.
        Experiment e;
        e.id = 3;
        e.kernel = QStringLiteral("01-softmax");
        e.status = ExperimentStatus::Kept;
        e.metrics = m;
        LogEntry entry;
        entry.experiment = e;
        const QByteArray line = ExperimentLog::encode(entry);
        QVERIFY(line.contains("\"judge\":\"0123456789ab\""));
        QVERIFY(line.contains("\"isolation\":\"bubblewrap+cgroup v2\""));
        const ExperimentLog::ReadResult read
            = ExperimentLog::parse(line, QStringLiteral("experiments.jsonl"));
        QVERIFY2(read.errors.isEmpty(), qPrintable(read.errors.join(QLatin1Char('\n'))));
        QCOMPARE(read.entries.size(), 1);
        QCOMPARE(read.entries.front().experiment.metrics, m);
    }

    void withoutTorchCompileTheAbsenceIsSaid()
    {
        const BenchResult r = HarnessClient::fromReply(okReply({ { "correct", true }, { "status", "ok" },
            { "latency_us", 10.0 }, { "speedup", 2.0 }, { "compile_latency_us", nullptr },
            { "compile",
                { { "available", false },
                    { "note", "not available (torch 1.13.1 has no torch.compile)" } } } }));
        QVERIFY(!Metrics::has(r.metrics.compileLatencyUs));
        QCOMPARE(r.metrics.compileNote, QStringLiteral("not available (torch 1.13.1 has no torch.compile)"));
        QCOMPARE(r.metrics.bestTorchSpeedup(), 2.0); // eager is the only PyTorch measured
    }

    // A run of one done kernel whose head (experiment 1, kept) is `speedup` x eager PyTorch.
    static RunSnapshot oneDoneKernel(const char *folder, double speedup)
    {
        RunSnapshot s;
        KernelRecord k;
        k.folder = QString::fromLatin1(folder);
        k.state = KernelState::Done;
        k.headExperiment = 1;
        s.kernels.push_back(k);
        Experiment e;
        e.id = 1;
        e.kernel = k.folder;
        e.status = ExperimentStatus::Kept;
        e.metrics.correct = true;
        e.metrics.speedup = speedup;
        s.experiments.push_back(e);
        s.experimentIndex.insert(1, 0);
        return s;
    }

    void pytorchWinsAgainstTheBestOfThem()
    {
        RunSnapshot s = oneDoneKernel("01-softmax", 1.3); // beats eager
        QVERIFY(!s.pytorchWins(s.kernels[0]));
        s.experiments[0].metrics.compileSpeedup = 0.9; // but not torch.compile
        QVERIFY(s.pytorchWins(s.kernels[0]));
        QCOMPARE(s.headBestTorchSpeedup(s.kernels[0]), 0.9);
    }

    void clearlySlowerIsBeyondTheBenchsNoise()
    {
        Metrics m;
        QVERIFY(!m.clearlySlowerThanTorch()); // not measured
        m.speedup = 0.47;
        QVERIFY(m.clearlySlowerThanTorch());
        m.speedup = 0.98;
        m.noisePct = 5.0; // a busy CPU: level within the noise
        QVERIFY(!m.clearlySlowerThanTorch());
        m.noisePct = 0.3; // a quiet GPU: the 1 % floor decides
        QVERIFY(m.clearlySlowerThanTorch());
        m.speedup = 0.995;
        QVERIFY(!m.clearlySlowerThanTorch());
    }

    void verifyOffersForTheWayTheModelRuns()
    {
        // #40 item 3: a done kernel that beats eager but not torch.compile is offered to an eager model
        // (eager PyTorch is what it replaces there) and kept out of a compiled one.
        RunSnapshot s = oneDoneKernel("01-fused_mlp", 1.2);
        s.experiments[0].metrics.compileSpeedup = 0.95;
        QVERIFY(std::isnan(ModelVerifier::pytorchWinsIn(s, s.kernels[0], QStringLiteral("eager"))));
        QCOMPARE(ModelVerifier::pytorchWinsIn(s, s.kernels[0], QStringLiteral("compile")), 0.95);
        s.experiments[0].metrics.speedup = 0.9; // slower than eager too: out in both modes
        QCOMPARE(ModelVerifier::pytorchWinsIn(s, s.kernels[0], QStringLiteral("eager")), 0.9);
        QCOMPARE(ModelVerifier::pytorchWinsIn(s, s.kernels[0], QStringLiteral("compile")), 0.9);
        s.kernels[0].state = KernelState::Active; // still worked on: a slower head is out all the same
        QCOMPARE(ModelVerifier::pytorchWinsIn(s, s.kernels[0], QStringLiteral("eager")), 0.9);
        s.experiments[0].metrics.correct = false; // no measured head: offered, the model decides
        QVERIFY(std::isnan(ModelVerifier::pytorchWinsIn(s, s.kernels[0], QStringLiteral("eager"))));
    }
};

AK_TEST_CLASS(NumbersTest)
#include "tst_numbers.moc"
