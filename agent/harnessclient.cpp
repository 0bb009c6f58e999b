#include "harnessclient.h"

#include <QFileInfo>

namespace ak {

namespace {

QString str(const nlohmann::json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString();
}

// null (the worker's form of NaN/Inf) and absent both mean "not measured".
double num(const nlohmann::json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}

Metrics readMetrics(const nlohmann::json &result)
{
    // Accept the metrics at the top level (the CLI's shape) or grouped under "metrics".
    const auto grouped = result.find("metrics");
    const nlohmann::json &m = grouped != result.end() && grouped->is_object() ? *grouped : result;
    Metrics out;
    out.latencyUs = num(m, "latency_us");
    out.refLatencyUs = num(m, "ref_latency_us");
    out.speedup = num(m, "speedup");
    out.tflops = num(m, "tflops");
    out.gbps = num(m, "gbps");
    out.pctPeak = num(m, "pct_peak");
    out.noisePct = num(m, "noise_pct");
    out.peakVramMb = num(m, "peak_vram_mb");
    out.bound = str(m, "bound");
    // The judge says where the kernel ran; a weaker isolation carries its reason along.
    const auto iso = result.find("isolation");
    if (iso != result.end() && iso->is_object()) {
        out.sandbox = str(*iso, "sandbox");
        const QString why = str(*iso, "weaker_because");
        if (!why.isEmpty())
            out.sandbox += QStringLiteral(" (") + why + QLatin1Char(')');
    }
    return out;
}

} // namespace

HarnessClient::HarnessClient(WorkerClient *worker)
    : m_worker(worker)
{
}

nlohmann::json HarnessClient::peaksJson(const DeviceInfo &device)
{
    // 0 means unknown: the harness then reports no % of peak and skips the impossible-throughput check
    // for that roof.
    nlohmann::json tflops = nlohmann::json::object();
    for (int p = 0; p < int(Precision::Count); ++p)
        tflops[precisionName(Precision(p)).toStdString()] = device.peakTflops[size_t(p)];
    return {{"name", device.name.toStdString()},
            {"tflops", tflops},
            {"bandwidth_gbs", device.bandwidthGBs},
            {"l2_mib", device.l2MiB}};
}

nlohmann::json HarnessClient::requestArgs(const BenchRequest &request) const
{
    nlohmann::json args = request.extra.is_object() ? request.extra : nlohmann::json::object();
    args["kernel_path"] = QFileInfo(request.kernelPath).absoluteFilePath().toStdString();
    args["device"] = request.device.toStdString();
    if (request.dtype.isEmpty())
        args["dtype"] = nullptr;
    else
        args["dtype"] = request.dtype.toStdString();
    args["quick"] = request.quick;
    args["time_limit_s"] = request.timeLimitSec > 0 ? request.timeLimitSec : m_defaultTimeLimitSec;
    args["peaks"] = peaksJson(request.deviceInfo);
    return args;
}

BenchResult HarnessClient::bench(const BenchRequest &request, const WorkerClient::ProgressFn &progress) const
{
    const int limit = request.timeLimitSec > 0 ? request.timeLimitSec : m_defaultTimeLimitSec;
    const WorkerReply reply =
        m_worker->request(QStringLiteral("bench"), requestArgs(request), limit * 1000, progress);
    return fromReply(reply);
}

BenchResult HarnessClient::fromReply(const WorkerReply &reply)
{
    BenchResult r;
    r.seconds = reply.seconds;
    r.stderrTail = reply.stderrTail;
    switch (reply.status) {
    case WorkerReply::Status::Ok: break;
    case WorkerReply::Status::Timeout:
        r.status = BenchStatus::Timeout;
        r.failure = reply.error;
        return r;
    case WorkerReply::Status::Crash:
        r.status = BenchStatus::Crash;
        r.failure = reply.error;
        r.traceback = reply.traceback;
        return r;
    case WorkerReply::Status::Error:
        // The harness reports everything a kernel does as a result; an exception out of the op
        // means the harness itself (or its import) failed.
        r.status = BenchStatus::Error;
        r.failure = QStringLiteral("harness error: ") + reply.error;
        r.traceback = reply.traceback;
        r.environmentError = true;
        return r;
    case WorkerReply::Status::Cancelled:
    case WorkerReply::Status::Unavailable:
        r.status = BenchStatus::Error;
        r.failure = reply.error;
        r.environmentError = true;
        return r;
    }

    const nlohmann::json &res = reply.result;
    r.raw = res;
    const auto correct = res.find("correct");
    r.correct = correct != res.end() && correct->is_boolean() && correct->get<bool>();
    const QString status = str(res, "status");
    if (!BenchResult::parseStatus(status, &r.status))
        r.status = r.correct ? BenchStatus::Ok : BenchStatus::Incorrect;
    // One verdict: a result may not call itself ok while saying it is incorrect.
    if (r.status == BenchStatus::Ok && !r.correct)
        r.status = BenchStatus::Incorrect;
    if (r.status != BenchStatus::Ok)
        r.correct = false;
    r.failure = str(res, "failure");
    // The harness flags failures that are the machine's, not the kernel's (no CUDA device, say).
    const auto env = res.find("environment_error");
    r.environmentError = env != res.end() && env->is_boolean() && env->get<bool>() && !r.correct;
    r.kernelType = str(res, "kernel_type");
    r.traceback = str(res, "traceback");
    const auto stages = res.find("stages");
    if (stages != res.end() && stages->is_array()) {
        for (const nlohmann::json &s : *stages) {
            if (!s.is_object())
                continue;
            BenchStage stage;
            stage.name = str(s, "name");
            const auto passed = s.find("passed");
            stage.passed = passed != s.end() && passed->is_boolean() && passed->get<bool>();
            stage.detail = str(s, "detail");
            r.stages.push_back(stage);
        }
    }
    if (!r.correct && r.failure.isEmpty()) {
        for (const BenchStage &s : r.stages)
            if (!s.passed) {
                r.failure = QStringLiteral("stage '%1' failed%2")
                                .arg(s.name, s.detail.isEmpty() ? QString() : QStringLiteral(": ") + s.detail);
                break;
            }
        if (r.failure.isEmpty())
            r.failure = QStringLiteral("the harness did not report the kernel correct");
    }
    r.metrics = readMetrics(res);
    r.metrics.correct = r.correct;
    const auto flags = res.find("flags");
    if (flags != res.end() && flags->is_array())
        for (const nlohmann::json &f : *flags)
            if (f.is_string())
                r.flags << QString::fromStdString(f.get<std::string>());
    return r;
}

} // namespace ak
