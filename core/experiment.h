#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QString>
#include <QVector>

#include <algorithm>
#include <cmath>

namespace ak {

// Outcome of one experiment. Pending: would be kept, waits for a person (review mode).
enum class ExperimentStatus {
    Running,
    Kept,
    Reverted,
    Failed,
    Crashed,
    Timeout,
    Pending,
    Rejected,
    Baseline
};

// The files' token ("keep", "revert", "timeout"): the log, results.tsv, `status --json`, prompts.
QString statusName(ExperimentStatus s);
bool parseStatus(const QString &text, ExperimentStatus *out);
// The same status in people's words ("kept", "reverted", "timed out"), translated (context
// "ExperimentStatus"): what the table, the details pane, the report and `status` show.
QString statusText(ExperimentStatus s);

// How a person reads an outcome: the categories the run's counts, the window's chart and the report
// share (failed, crashed and timeout are one "failed"), each with one colour everywhere.
enum class ExperimentOutcome { Baseline, Kept, Pending, Rejected, Reverted, Running, Failed };
ExperimentOutcome outcomeOf(ExperimentStatus s);
QString outcomeName(ExperimentOutcome o); // "kept", "failed", ...: the report's CSS classes
const char *outcomeColor(ExperimentOutcome o); // "#2f7d32": the chart's points, the report's dots

// What the harness measured. NaN = not measured (an incorrect kernel has no latency).
struct Metrics
{
    double latencyUs = std::nan("");
    double refLatencyUs = std::nan("");
    double speedup = std::nan(""); // paired ratio vs the PyTorch reference
    double tflops = std::nan("");
    double gbps = std::nan("");
    double pctPeak = std::nan(""); // % of the roof that bounds this kernel: the measured roof where known
    double pctPeakSpec = std::nan(""); // the same against the spec sheet's roof (docs/numbers.md)
    QString roof; // which roofs pctPeak used: "measured", "spec", "measured bandwidth, spec compute"
    // The best PyTorch: the reference under torch.compile(max-autotune), timed by the judge in the
    // same bench; NaN with compileNote saying why (no torch.compile, not enough time, it failed).
    double compileLatencyUs = std::nan("");
    double compileSpeedup = std::nan(""); // compileLatencyUs / latencyUs
    QString compileNote;
    double noisePct = std::nan("");
    double peakVramMb = std::nan("");
    QString bound; // "memory" | "compute" | ""
    // Where the kernel ran: "bubblewrap", or "process (<why the sandbox was missing>)". Empty in runs
    // recorded before the judge ran kernels in a sandbox.
    QString sandbox;
    QString judge; // the judge's version: a hash of the harness's Python sources
    QString isolation; // "bubblewrap+cgroup v2", "process, no cgroup", ...
    // The judge's precision probe (docs/harness.md "precision"): "fp32 accumulation (probed: float32)",
    // "tf32 (float32), allowed by the run", "not probed: ..."; empty in runs recorded before #43.
    QString precision;
    bool correct = false;

    static bool has(double v) { return !std::isnan(v); }
    // Slower than the PyTorch reference beyond the bench's noise (at least 1 %): no harness win, and
    // in the model it can only show the loss (session 25: an attention at 0.47x cuDNN); level within
    // the noise (a CPU matmul at 0.98x) is not. The loop's in-model checks skip such keeps.
    bool clearlySlowerThanTorch() const
    {
        const double noise = has(noisePct) ? std::max(1.0, noisePct) : 1.0;
        return has(speedup) && speedup * (1.0 + noise / 100.0) < 1.0;
    }
    // Speedup over the best PyTorch measured: the smaller of the eager and compiled speedups.
    double bestTorchSpeedup() const
    {
        return has(compileSpeedup) && !(speedup <= compileSpeedup) ? compileSpeedup : speedup;
    }
};
// Field by field, "not measured" (NaN) equal to itself: a live view compares a reloaded row with the
// one it shows without formatting either.
bool operator==(const Metrics &a, const Metrics &b);
inline bool operator!=(const Metrics &a, const Metrics &b)
{
    return !(a == b);
}

// One experiment as recorded in experiments.jsonl.
struct Experiment
{
    int id = 0; // run-wide, 1-based, increasing
    QString kernel; // kernel folder name, e.g. "01-matmul_nvjet"
    QString commit; // hex object id of the experiment commit
    QString parent; // commit it was based on
    QString agent; // "tune", "llm:<model>", "command", "replay", "user"
    QString description; // agent's one-line description
    ExperimentStatus status = ExperimentStatus::Running;
    QString failure; // human-readable reason when not kept
    Metrics metrics;
    QDateTime started;
    QDateTime finished;
    double agentSeconds = 0; // time the agent took to propose
    double benchSeconds = 0; // time the harness took
    // What proposing cost (LLM agents); 0 for agents without a model.
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double cost = 0; // USD, from the user's price table
};
bool operator==(const Experiment &a, const Experiment &b);
inline bool operator!=(const Experiment &a, const Experiment &b)
{
    return !(a == b);
}

} // namespace ak

Q_DECLARE_METATYPE(ak::Experiment)
