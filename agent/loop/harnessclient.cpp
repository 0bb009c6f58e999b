#include "loop/harnessclient.h"

#include "terminaltext.h"

#include "jsonfield.h"

#include <QFile>
#include <QFileInfo>

namespace ak {

namespace {

// null (the worker's form of NaN/Inf) and absent both mean "not measured".
const double kNotMeasured = std::nan("");

Metrics readMetrics(const nlohmann::json &result)
{
    // Accept the metrics at the top level (the CLI's shape) or grouped under "metrics".
    const nlohmann::json *grouped = jsonfield::object(result, "metrics");
    const nlohmann::json &m = grouped ? *grouped : result;
    Metrics out;
    out.latencyUs = jsonfield::number(m, "latency_us", kNotMeasured);
    out.refLatencyUs = jsonfield::number(m, "ref_latency_us", kNotMeasured);
    out.speedup = jsonfield::number(m, "speedup", kNotMeasured);
    out.tflops = jsonfield::number(m, "tflops", kNotMeasured);
    out.gbps = jsonfield::number(m, "gbps", kNotMeasured);
    out.pctPeak = jsonfield::number(m, "pct_peak", kNotMeasured);
    out.noisePct = jsonfield::number(m, "noise_pct", kNotMeasured);
    out.peakVramMb = jsonfield::number(m, "peak_vram_mb", kNotMeasured);
    out.bound = jsonfield::text(m, "bound");
    out.pctPeakSpec = jsonfield::number(m, "pct_peak_spec", kNotMeasured);
    out.roof = jsonfield::text(m, "roof");
    out.compileLatencyUs = jsonfield::number(m, "compile_latency_us", kNotMeasured);
    out.compileSpeedup = jsonfield::number(m, "compile_speedup", kNotMeasured);
    if (const nlohmann::json *c = jsonfield::object(m, "compile"))
        out.compileNote = jsonfield::text(*c, "note");
    // Which judge measured this (#43): its sources' hash and how it isolated the kernel.
    if (const nlohmann::json *judge = jsonfield::object(result, "judge")) {
        out.judge = jsonfield::text(*judge, "version");
        out.isolation = jsonfield::text(*judge, "isolation");
    }
    // What the precision probe found (a shortcut allowed by the run shows here, refused ones in the failure).
    if (const nlohmann::json *p = jsonfield::object(result, "precision"))
        out.precision = jsonfield::text(*p, "text");
    // The judge says where the kernel ran; a weaker isolation carries its reason along.
    if (const nlohmann::json *iso = jsonfield::object(result, "isolation")) {
        out.sandbox = jsonfield::text(*iso, "sandbox");
        const QString why = jsonfield::text(*iso, "weaker_because");
        if (!why.isEmpty())
            out.sandbox += QStringLiteral(" (") + why + QLatin1Char(')');
    }
    return out;
}

} // namespace

HarnessClient::HarnessClient(WorkerClient *worker)
    : m_worker(worker)
{ }

nlohmann::json HarnessClient::peaksJson(const DeviceInfo &device)
{
    // 0 means unknown: the harness then reports no % of peak and skips the impossible-throughput check
    // for that roof.
    nlohmann::json tflops = nlohmann::json::object();
    for (int p = 0; p < int(Precision::Count); ++p)
        tflops[precisionName(Precision(p)).toStdString()] = device.peakTflops[size_t(p)];
    nlohmann::json peaks = { { "name", device.name.toStdString() }, { "tflops", tflops },
        { "bandwidth_gbs", device.bandwidthGBs }, { "l2_mib", device.l2MiB } };
    // The judge takes % of roof against what the device measurably does (docs/numbers.md); the spec
    // roofs above stay its physical limit for the impossible-throughput check.
    if (device.measured.known())
        peaks["measured"] = device.measured.toJson();
    return peaks;
}

nlohmann::json HarnessClient::requestArgs(const BenchRequest &request) const
{
    nlohmann::json args = request.extra.is_object() ? request.extra : nlohmann::json::object();
    args["kernel_path"] = QFileInfo(request.kernelPath).absoluteFilePath().toStdString();
    // The source travels with the request, so a worker on another machine (a launcher) needs no
    // shared disk; the path stays the name failures are reported under. Base64: a kernel.py that is
    // not UTF-8 must still arrive byte for byte (and JSON carries only UTF-8).
    QFile kernel(request.kernelPath);
    if (kernel.open(QIODevice::ReadOnly))
        args["kernel_source_b64"] = kernel.readAll().toBase64().toStdString();
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
    const WorkerReply reply
        = m_worker->request(QStringLiteral("bench"), requestArgs(request), limit * 1000, progress);
    return fromReply(reply);
}

BenchResult HarnessClient::fromReply(const WorkerReply &reply)
{
    BenchResult r = parseReply(reply);
    // Everything below came from the kernel's process or the worker: data, never terminal commands.
    r.failure = TerminalText::clean(r.failure);
    r.traceback = TerminalText::clean(r.traceback);
    r.stderrTail = TerminalText::clean(r.stderrTail);
    for (BenchStage &s : r.stages)
        s.detail = TerminalText::clean(s.detail);
    for (QString &f : r.flags)
        f = TerminalText::clean(f);
    return r;
}

BenchResult HarnessClient::parseReply(const WorkerReply &reply)
{
    BenchResult r;
    r.seconds = reply.seconds;
    r.stderrTail = reply.stderrTail;
    switch (reply.status) {
    case WorkerReply::Status::Ok:
        break;
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
    r.correct = jsonfield::boolean(res, "correct", false);
    const QString status = jsonfield::text(res, "status");
    if (!BenchResult::parseStatus(status, &r.status))
        r.status = r.correct ? BenchStatus::Ok : BenchStatus::Incorrect;
    // One verdict: a result may not call itself ok while saying it is incorrect.
    if (r.status == BenchStatus::Ok && !r.correct)
        r.status = BenchStatus::Incorrect;
    if (r.status != BenchStatus::Ok)
        r.correct = false;
    r.failure = jsonfield::text(res, "failure");
    // The harness flags failures that are the machine's, not the kernel's (no CUDA device, say).
    r.environmentError = jsonfield::boolean(res, "environment_error", false) && !r.correct;
    r.kernelType = jsonfield::text(res, "kernel_type");
    r.traceback = jsonfield::text(res, "traceback");
    if (const nlohmann::json *stages = jsonfield::array(res, "stages")) {
        for (const nlohmann::json &s : *stages) {
            if (!s.is_object())
                continue;
            BenchStage stage;
            stage.name = jsonfield::text(s, "name");
            stage.passed = jsonfield::boolean(s, "passed", false);
            stage.detail = jsonfield::text(s, "detail");
            r.stages.push_back(stage);
        }
    }
    if (!r.correct && r.failure.isEmpty()) {
        for (const BenchStage &s : r.stages)
            if (!s.passed) {
                r.failure
                    = QStringLiteral("stage '%1' failed%2")
                          .arg(s.name, s.detail.isEmpty() ? QString() : QStringLiteral(": ") + s.detail);
                break;
            }
        if (r.failure.isEmpty())
            r.failure = QStringLiteral("the harness did not report the kernel correct");
    }
    r.metrics = readMetrics(res);
    r.metrics.correct = r.correct;
    r.flags << jsonfield::texts(res, "flags");
    return r;
}

} // namespace ak
