#pragma once

#include "deviceinfo.h"

#include <QString>

namespace ak {

class WorkerClient;

// Asks the worker's `roofs` op (profiler/python/akroofs.py) what the device measurably does: a
// large copy's bandwidth and the best matmul throughput at a dtype. The op caches per device,
// driver, clocks and dtype ($XDG_CACHE_HOME/autokernel/roofs.json on the worker's machine), so the
// first use of a device measures (seconds) and later ones read the cache; force measures again.
class RoofMeter
{
public:
    struct Request
    {
        QString device = QStringLiteral("cpu"); // "cpu", "cuda", "cuda:1" (the worker is pinned already)
        QString dtype; // "bf16", "fp16", "fp32" (another is an error); empty: bf16 on cuda, fp32 on cpu
        bool force = false;
        int timeoutSec = 300;
    };

    // Fills *out (the measured roofs) or returns false with *error naming the cause.
    static bool measure(WorkerClient *worker, const Request &request, MeasuredRoofs *out, QString *error);

    // The dtype whose matmul roof a run needs: its own when it is a float the op measures, else bf16
    // on a GPU, fp32 on the CPU.
    static QString dtypeFor(const QString &device, const QString &runDtype);
};

} // namespace ak
