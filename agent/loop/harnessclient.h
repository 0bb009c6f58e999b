#pragma once

#include "deviceinfo.h"
#include "loop/benchresult.h"
#include "workerclient.h"

#include <QString>

#include <nlohmann/json.hpp>

namespace ak {

// What to benchmark. The request's JSON form is the `bench` op's args (docs/worker.md).
struct BenchRequest
{
    QString kernelPath; // kernel.py; made absolute before sending
    QString device = QStringLiteral("cpu"); // "cpu" | "cuda"
    QString dtype; // "fp32" | "fp16" | "bf16"; empty: the kernel's TEST_DTYPES
    bool quick = false; // fewer sizes and repetitions (CI, first look)
    int timeLimitSec = 0; // wall-clock limit; 0: the client's default
    DeviceInfo deviceInfo; // peaks for % of roof and the impossible-throughput check
    nlohmann::json extra = nlohmann::json::object(); // passed through (e.g. "seed", "model_shapes")
};

// The C++ twin of agent/python/harness/bench.py: builds the `bench` request, runs it in the warm
// worker under a wall-clock limit and turns the reply into a BenchResult. A timeout or crash of the
// worker becomes a result (status Timeout / Crash), never an exception; the worker restarts itself.
class HarnessClient
{
public:
    explicit HarnessClient(WorkerClient *worker);

    void setDefaultTimeLimitSec(int seconds) { m_defaultTimeLimitSec = seconds; }
    int defaultTimeLimitSec() const { return m_defaultTimeLimitSec; }

    // Blocking; call it on the worker's thread (see WorkerClient).
    BenchResult bench(const BenchRequest &request, const WorkerClient::ProgressFn &progress = {}) const;

    nlohmann::json requestArgs(const BenchRequest &request) const;
    static nlohmann::json peaksJson(
        const DeviceInfo &device); // the `peaks` arg: {name, tflops{fp32..}, bandwidth_gbs, l2_mib}
    static BenchResult fromReply(const WorkerReply &reply);

    static constexpr int kDefaultTimeLimitSec = 180; // first call pays torch import and Triton compiles

private:
    static BenchResult parseReply(const WorkerReply &reply); // fromReply before the text is cleaned

    WorkerClient *m_worker;
    int m_defaultTimeLimitSec = kDefaultTimeLimitSec;
};

} // namespace ak
