#pragma once

#include "deviceinfo.h"

#include <QStringList>

#include <nlohmann/json.hpp>

namespace ak {

// Finds the GPU a run targets without importing torch: NVML and the CUDA driver (NVIDIA) or ROCm SMI
// (AMD), all dlopen'ed, then GpuDatabase::complete() for peaks (database by name, or an estimate from
// SM count x clock and bus width x memory clock). No GPU is a normal result: available == false.
class DeviceDetector
{
public:
    // `log` receives one line per backend tried ("nvml: NVML not found (...)").
    static DeviceInfo detect(int index = 0, QStringList *log = nullptr);

    // The worker's `device` op reply (profiler/python/akdevice.py) as a completed DeviceInfo: the
    // fallback when no vendor library can be loaded in this process. available == false when the
    // reply says so.
    static DeviceInfo fromTorch(const nlohmann::json &reply);
};

} // namespace ak
