#pragma once

#include "experiment.h"

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <nlohmann/json.hpp>

namespace ak {

// Verdict of the harness on one kernel. Ok: correct and timed. Incorrect: a correctness stage (or an
// anti-cheat check) failed. Error: the kernel (or, with environmentError, the harness) raised.
// Timeout / Crash: the worker had to be killed or died; it has been restarted.
enum class BenchStatus { Ok, Incorrect, Error, Timeout, Crash };

struct BenchStage
{
    QString name; // "smoke", "sizes", "hostile", "determinism", "odd_sizes", "model_shapes", ...
    bool passed = false;
    QString detail; // why it failed, or a short summary
};

struct BenchResult
{
    BenchStatus status = BenchStatus::Error;
    bool correct = false;
    QString failure; // human-readable reason; empty when correct
    QVector<BenchStage> stages;
    Metrics metrics; // NaN fields = not measured
    QString kernelType; // KERNEL_TYPE the harness found
    QString traceback; // Python traceback when status is Error
    QString stderrTail; // worker stderr during the request (for Crash/Timeout reports)
    bool environmentError = false; // not the kernel's fault: worker missing, harness failed, cancelled
    QStringList flags; // correct, but worth a person's look (implausible speedup, beyond the roof)
    double seconds = 0; // wall time of the request
    nlohmann::json raw; // the harness's result object as received (empty for Timeout/Crash)

    // The `autokernel-cli bench --json` object: raw's extra fields, overridden by the normalised keys
    // (correct, status, failure, stages, metrics when measured).
    nlohmann::json toJson() const;

    static QString statusName(BenchStatus s); // "ok", "incorrect", "error", "timeout", "crash"
    static bool parseStatus(const QString &text, BenchStatus *out);
};

} // namespace ak

Q_DECLARE_METATYPE(ak::BenchResult)
