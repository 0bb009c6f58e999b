#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QVector>

#include <cmath>
#include <optional>

namespace ak {

// One of the four whole-model timings of verification.json ("timings"): a variant that was not
// measured (no torch.compile, --no-compile, compile failed) has measured = false and, when the
// producer said why, `error`.
struct ModelTiming
{
    bool measured = false;
    double medianUs = std::nan("");
    double speedupVsEager = std::nan("");
    double speedupVsCompile = std::nan(""); // compile+ours only
    QString error;
};

// What verify found for one kernel folder inside the model (verification.json "kernels[]").
struct KernelVerification
{
    QString kernel; // folder name, "01-matmul"
    QString opType;
    QStringList sites; // module names of its call sites
    bool plugged = false; // some call of the model reached the kernel
    bool parityChecked = false; // false: not plugged, or it could not be imported
    bool parityOk = false;
    double parityError = std::nan(""); // worst over the seeds, in tolerances from the truth
    double eagerError = std::nan(""); // eager's own error against the same truth
    QString worstOutput;
    double effectPct = std::nan(""); // % of the model's time it saves (leave one out); NaN: not measured
    // "versus": what it saves per forward (us, leave one out) in eager mode and under torch.compile;
    // NaN where not measured (compile only in a verification of mode compile). Negative: PyTorch's
    // own code, or inductor's for these sites, is faster.
    double savedEagerUs = std::nan("");
    double savedCompileUs = std::nan("");
    bool compileWins = false; // inductor's code for its sites beats it beyond noise
    bool inFinalSet = false;
    bool reused = false; // parity taken from the previous verification (nothing changed)
    QString whyNot; // why it is not in the final set, as the producer worded it
    // The cold re-check (#43 item 3): paired ratios (PyTorch time / kernel time) of a fresh bench;
    // offered only when the 10th percentile is above 1. pairs 0: not re-checked (older files).
    struct Recheck
    {
        int pairs = 0;
        double p10 = std::nan("");
        double median = std::nan("");
        double p90 = std::nan("");
        bool offered = false;
    } recheck;
};

// verification.json as `autokernel-cli verify` writes it (agent/python/modelplug/verify.py,
// docs/model-speedup.md). A value type: the loader builds it on its thread, the window shows it.
struct ModelVerification
{
    QDateTime when;
    QString mode; // "eager" | "compile": how the final set was chosen (older files: eager)
    QString device; // "cpu" | "cuda"
    QString deviceName; // "NVIDIA H200", "cpu"
    QString dtype; // torch name, "bfloat16"
    QString torch;
    QString triton; // empty: not installed
    QString python;
    QVector<qint64> seeds;
    QVector<KernelVerification> kernels;
    QStringList finalSet;
    bool parityOk = false; // the final set together, every seed
    double parityError = std::nan("");
    double eagerError = std::nan("");
    QString parityNote; // e.g. "the set failed parity together; nothing is offered"
    ModelTiming eager;
    ModelTiming eagerOurs;
    ModelTiming compile;
    ModelTiming compileOurs;
    double compileSeconds = std::nan(""); // torch.compile of the original
    double compileOursSeconds = std::nan(""); // torch.compile with the kernels plugged in
    QString compileAdvice; // what a torch.compile user should do with the set; empty: compile not timed
    double modelSpeedup = std::nan(""); // eager + ours vs eager
    double seconds = std::nan(""); // how long the verification took

    const KernelVerification *kernel(const QString &name) const;

    // nullopt when `data` is not a usable verification (not JSON, another format, no eager timings);
    // every problem, fatal or not, is appended to `warnings` naming `fileName` and the field
    // ("verification.json: \"timings.eager.median_us\" is not a number"). Never throws.
    static std::optional<ModelVerification> parse(
        const QByteArray &data, const QString &fileName, QStringList *warnings);
};

} // namespace ak
