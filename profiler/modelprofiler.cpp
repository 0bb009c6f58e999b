#include "modelprofiler.h"

#include "cpudevice.h"
#include "devicedetector.h"

#include <QFileInfo>

namespace ak {

DeviceInfo ModelProfiler::resolveDevice(WorkerClient &worker, const QString &device, QStringList *log)
{
    if (device == QLatin1String("cpu"))
        return cpuDevice();
    DeviceInfo d = DeviceDetector::detect(0, log);
    if (d.available)
        return d;
    // No vendor library in this process (or the worker runs elsewhere): ask torch in the worker.
    const WorkerReply reply = worker.request(QStringLiteral("device"), nlohmann::json::object(), 120000);
    if (reply.ok()) {
        d = DeviceDetector::fromTorch(reply.result);
        if (d.available)
            return d;
        if (log)
            *log << QStringLiteral("torch: ") + d.note;
    } else if (log) {
        *log << QStringLiteral("torch: device op failed: ") + reply.error;
    }
    // Nothing found: profile on the CPU unless a GPU was demanded (the worker then reports why not).
    return device == QLatin1String("cuda") ? d : cpuDevice();
}

bool ModelProfiler::profile(WorkerClient &worker, const Options &o, const DeviceInfo &device,
    ProfileReport *out, QString *error, QString *traceback, const WorkerClient::ProgressFn &progress)
{
    QString model = o.model;
    // A path is resolved here, where the user typed it; the worker may run in another directory.
    if (model.contains(QLatin1Char('/')) || model.endsWith(QLatin1String(".py")))
        model = QFileInfo(model).absoluteFilePath();
    nlohmann::json args { { "model", model.toStdString() }, { "device", o.device.toStdString() },
        { "dtype", o.dtype.toStdString() }, { "warmup", o.warmup }, { "iterations", o.iterations } };
    const WorkerReply reply = worker.request(QStringLiteral("profile"), args, o.timeoutMs, progress);
    if (!reply.ok()) {
        switch (reply.status) {
        case WorkerReply::Status::Timeout:
            *error = QStringLiteral("profiling %1 did not finish within %2 s; the worker was stopped")
                         .arg(o.model)
                         .arg(o.timeoutMs / 1000);
            break;
        case WorkerReply::Status::Crash:
            *error = QStringLiteral("the Python worker crashed while profiling %1: %2")
                         .arg(o.model, reply.error);
            break;
        default:
            *error = reply.error.isEmpty() ? QStringLiteral("profiling %1 failed (%2)")
                                                 .arg(o.model, WorkerReply::statusName(reply.status))
                                           : reply.error;
        }
        if (traceback)
            *traceback = reply.traceback.isEmpty() ? reply.stderrTail : reply.traceback;
        return false;
    }
    // Roofs only make sense against what was timed: a CPU run (no CUDA in the worker's torch) is
    // never measured against a GPU's peaks.
    const bool timedOnCpu
        = reply.result.is_object() && reply.result.value("activity", std::string()) == "cpu";
    return ProfileReport::fromWorker(reply.result, timedOnCpu ? cpuDevice() : device, out, error);
}

} // namespace ak
