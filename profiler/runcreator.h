#pragma once

#include "deviceinfo.h"
#include "profilereport.h"
#include "workerclient.h"

#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <mutex>

namespace ak {

class RunStore;

// Profiles a model and turns the profile into a new run directory: RunStore::create, one kernel
// folder per ranked optimisation target (kernel.py from the harness `extract` op) and profile.json.
// Shared by `autokernel-cli profile` and the window's "Open example run". The run directory comes into
// being only after a complete profile, so a model that fails leaves outDir exactly as it was.
//
// Blocking (it owns a WorkerClient and waits on it): call from the CLI or a worker thread, never the
// GUI thread. cancel() may be called from any thread.
class RunCreator
{
public:
    struct Options
    {
        QString model; // bundled example name (gpt2, llama, bert, cnn) or path to a .py
        QString outDir; // run directory to create (may exist, must not hold a run)
        QString device; // "cuda" | "cpu" | "" (cuda when available)
        QString dtype; // "bf16" | "fp16" | "fp32" | "" (the model's choice)
        QString python; // interpreter with torch; empty: PythonLocator's order
        int timeoutMs = 600000; // the profile request; the worker is killed past it
        int iterations = 3;
        int warmup = 2;
        int top = 10; // kernel folders to create, largest share first
        // run.json settings.allow_reduced_precision: kernels that accumulate in fp16/bf16 or read fp32
        // as TF32 (where PyTorch does not) are kept, flagged, instead of refused (docs/harness.md).
        bool allowReducedPrecision = false;
    };

    // Why create() failed; the CLI maps these to its exit codes and wording.
    enum class Failure {
        None,
        RunExists, // outDir already holds a run (checked before any work)
        NoPython, // no interpreter with torch
        ProfileFailed, // the model did not load, raised, ran out of memory or timed out
        CannotCreateRun, // RunStore::create refused outDir
        CannotWriteProfile, // the run exists but profile.json could not be written
        Cancelled,
    };

    struct Result
    {
        Failure failure = Failure::None;
        QString error; // one line, without a program name
        QString traceback; // ProfileFailed: the Python traceback (or the worker's stderr tail)
        QString python; // the interpreter used
        DeviceInfo device; // the device the roofs are computed against
        ProfileReport report; // ranked; kernels that got a folder have `folder` set
        int kernelFolders = 0;
        QStringList notes; // kernels that got no folder, and why
        bool ok() const { return failure == Failure::None; }
    };

    // All optional; called on the thread running create(), in this order.
    struct Callbacks
    {
        std::function<void(const DeviceInfo &device)> deviceResolved; // before profiling starts
        WorkerClient::ProgressFn progress; // the worker's profile progress
        std::function<void(const QString &step)> step; // creating the run, each kernel.py
    };

    explicit RunCreator(const Options &options);
    ~RunCreator();
    RunCreator(const RunCreator &) = delete;
    RunCreator &operator=(const RunCreator &) = delete;

    Result create(const Callbacks &callbacks = Callbacks());
    // Thread-safe: stops the worker; create() returns Failure::Cancelled soon after. A run directory
    // already created is left as far as it got (callers that need all-or-nothing create into a
    // temporary directory and rename it, as ExampleRun does).
    void cancel();
    bool isCancelled() const { return m_cancelled.load(); }

    // Kernel types that have a kernel.py contract (an optimisation target); others stay in profile.json.
    static bool isTarget(const QString &opType);

private:
    void extractKernels(WorkerClient &worker, RunStore &store, Result &r, const Callbacks &callbacks);
    void setWorker(WorkerClient *worker);

    Options m_options;
    std::atomic<bool> m_cancelled { false };
    std::mutex m_workerMutex; // guards m_worker against cancel() from another thread
    WorkerClient *m_worker = nullptr;
};

} // namespace ak
