#include "loop/benchresult.h"

#include "enumnames.h"

namespace ak {

namespace {
// The judge's reply's "status" values.
constexpr EnumToken<BenchStatus> kBenchStatusNames[] = {
    { BenchStatus::Ok, "ok" },
    { BenchStatus::Incorrect, "incorrect" },
    { BenchStatus::Error, "error" },
    { BenchStatus::Timeout, "timeout" },
    { BenchStatus::Crash, "crash" },
};

// A NaN never reaches JSON: a correct result lists every metric key (null = not known, e.g. % of peak
// without device peaks); an incorrect one carries only what was really measured.
void putMetric(nlohmann::json &j, const char *key, double v, bool correct)
{
    if (Metrics::has(v))
        j[key] = v;
    else if (correct)
        j[key] = nullptr;
    else
        j.erase(key);
}
} // namespace

QString BenchResult::statusName(BenchStatus s)
{
    return tokenOf(kBenchStatusNames, s);
}

bool BenchResult::parseStatus(const QString &text, BenchStatus *out)
{
    return fromToken(kBenchStatusNames, text, out);
}

nlohmann::json BenchResult::toJson() const
{
    nlohmann::json j = raw.is_object() ? raw : nlohmann::json::object();
    j["correct"] = correct;
    j["status"] = statusName(status).toStdString();
    j["failure"] = failure.toStdString();
    nlohmann::json stageList = nlohmann::json::array();
    for (const BenchStage &s : stages)
        stageList.push_back({ { "name", s.name.toStdString() }, { "passed", s.passed },
            { "detail", s.detail.toStdString() } });
    j["stages"] = stageList;
    putMetric(j, "latency_us", metrics.latencyUs, correct);
    putMetric(j, "ref_latency_us", metrics.refLatencyUs, correct);
    putMetric(j, "speedup", metrics.speedup, correct);
    putMetric(j, "tflops", metrics.tflops, correct);
    putMetric(j, "gbps", metrics.gbps, correct);
    putMetric(j, "pct_peak", metrics.pctPeak, correct);
    putMetric(j, "pct_peak_spec", metrics.pctPeakSpec, correct);
    putMetric(j, "compile_latency_us", metrics.compileLatencyUs, correct);
    putMetric(j, "compile_speedup", metrics.compileSpeedup, correct);
    putMetric(j, "noise_pct", metrics.noisePct, correct);
    putMetric(j, "peak_vram_mb", metrics.peakVramMb, correct);
    if (!metrics.bound.isEmpty() || correct)
        j["bound"] = metrics.bound.toStdString();
    if (!kernelType.isEmpty())
        j["kernel_type"] = kernelType.toStdString();
    if (!traceback.isEmpty())
        j["traceback"] = traceback.toStdString();
    if (environmentError)
        j["environment_error"] = true;
    j["seconds"] = seconds;
    return j;
}

} // namespace ak
