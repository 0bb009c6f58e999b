#pragma once

#include "workerclient.h"

#include <nlohmann/json.hpp>

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <functional>

namespace ak {

struct RunSnapshot;

struct VerifyOptions
{
    QString runDir;
    QString python; // empty: PythonLocator::forRun
    QString device; // "cpu" | "cuda"; empty: the device the run was profiled on
    QStringList kernels; // kernel folder names to consider; empty: every kernel of the run
    int seeds = 3; // fresh seeded input draws for parity
    int rounds = 7; // alternating timing rounds per comparison
    bool compile = true; // also time torch.compile (max-autotune-no-cudagraphs) with and without
    // "eager": the final set chosen by each kernel's effect on the eager model; "compile": by its
    // effect under torch.compile (the model compiled with all kernels and without each). See
    // ModelVerifier::modeError.
    QString mode = QStringLiteral("eager");
    bool allowChangedModel = false;
    int timeoutSec = 3600;
    // Called on verify's thread with the worker once it exists and with nullptr before it is gone, so
    // another thread can call the thread-safe WorkerClient::cancel() in between. WorkerClient drops a
    // cancel that reaches it while idle: one asked before the request started must be asked again
    // (from the progress callback, which runs only while the request is in flight).
    std::function<void(WorkerClient *)> onWorker;
};

struct VerifyOutcome
{
    bool ok = false;
    bool environmentError = false; // no Python, no worker, a model that cannot run: exit 2
    QString error;
    nlohmann::json verification; // verification.json's object
    QString recorded; // how it was recorded: "committed" or "queued for the loop"
    bool cancelled = false; // WorkerClient::cancel() ended it: error "cancelled", nothing recorded
};

struct ExportOptions
{
    QString runDir;
    QString outDir; // created if missing
    QString package; // the package's name; empty: the producer's default (autokernel_kernels)
    QString python; // empty: PythonLocator::forRun
    QString mode; // "eager" | "compile": how the package's apply() plugs; empty: the verification's mode
    int timeoutSec = 120;
};

struct ExportOutcome
{
    bool ok = false;
    bool environmentError = false; // no run, no verification, no Python, no worker: exit 2
    QString error;
    QString packageDir;
    QStringList files; // what the package holds, as the producer lists them
    int kernels = 0; // kernels in the package (the verification's final set)
    double modelSpeedup = 0; // the verification's measured eager + ours vs eager
    QString mode; // the package's mode (eager | compile)
    QString chosenInMode; // the mode verify chose the set in
};

// `autokernel-cli verify`, the window's Verify and `run --verify-at-end`: the run's kept kernels put
// back into the model at their recorded call sites by the worker's `verify` op
// (agent/python/modelplug/verify.py), parity and timings measured there, the result recorded in the
// run (verification.json, committed on the best branch) with what an earlier verification found.
// `autokernel-cli export` and the window's Export: the verified final set as a Python package.
class ModelVerifier
{
public:
    // The worker's args; empty with `error` set when the run cannot be verified as asked.
    static nlohmann::json requestArgs(const RunSnapshot &run, const VerifyOptions &options, QString *error);
    static VerifyOutcome verify(const VerifyOptions &options, const WorkerClient::ProgressFn &progress = {});
    // The verified final set as a standalone package (the worker's `export` op, modelplug/export.py).
    // Blocking; call it off the GUI thread.
    static ExportOutcome exportPackage(const ExportOptions &options);
    // Commits verification.json through the run store, or queues it for the process writing the run.
    static bool record(
        const QString &runDir, const nlohmann::json &verification, QString *how, QString *error);
    // Empty when `mode` is a verification mode ("eager", "compile"), else the error naming `flag`;
    // compile mode also needs compile on (`compileOn`, verify's --no-compile off).
    static QString modeError(const QString &mode, const QString &flag, bool compileOn = true);
    // "bf16" -> "bfloat16"; the names torch uses.
    static QString torchDtype(const QString &shortName);
    // The speedup that keeps a kernel out of the model in `mode`, NaN when it is offered: in compile
    // mode a head slower than the best PyTorch measured (eager or compiled) cannot help the compiled
    // model; in eager mode only eager PyTorch is what it replaces, so a head that beats eager but not
    // torch.compile is still offered and the in-model check decides.
    static double pytorchWinsIn(const RunSnapshot &run, const KernelRecord &k, const QString &mode);
};

} // namespace ak

Q_DECLARE_METATYPE(ak::VerifyOutcome)
Q_DECLARE_METATYPE(ak::ExportOutcome)
