#pragma once

#include "deviceinfo.h"
#include "profilereport.h"
#include "workerclient.h"

#include <QString>
#include <QStringList>

namespace ak {

// Profiles a whole model through the worker's `profile` op and turns the reply into a ranked
// ProfileReport. Blocking: call from the CLI or a worker thread, never the GUI thread.
class ModelProfiler
{
public:
    struct Options
    {
        QString model; // bundled example name or path to a .py (made absolute here)
        QString device; // "cuda" | "cpu" | "" (auto)
        QString dtype; // "bf16" | "fp16" | "fp32" | "" (model's choice)
        int warmup = 2;
        int iterations = 3;
        int timeoutMs = 600000; // the whole profile request; the worker is killed past it
    };

    // The device roofs are computed against: the CPU for device "cpu"; otherwise NVML / the CUDA
    // driver / ROCm SMI, then the worker's torch (`device` op). `log` receives what was tried.
    static DeviceInfo resolveDevice(WorkerClient &worker, const QString &device, QStringList *log = nullptr);

    // On failure returns false; *error names the cause (the model file and what went wrong) and
    // *traceback holds the Python traceback when there is one.
    static bool profile(WorkerClient &worker, const Options &options, const DeviceInfo &device,
        ProfileReport *out, QString *error, QString *traceback = nullptr,
        const WorkerClient::ProgressFn &progress = WorkerClient::ProgressFn());
};

} // namespace ak
