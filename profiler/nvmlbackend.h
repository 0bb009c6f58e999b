#pragma once

#include "deviceinfo.h"

namespace ak {

// Reads a GPU through NVML (libnvidia-ml, dlopen'ed): name, compute capability, max SM and memory
// clocks, memory bus width, memory size. NVML has no SM count; the CUDA driver supplies it.
class NvmlBackend
{
public:
    // Fills the fields NVML knows into *out (others untouched). Returns false and sets *why when
    // NVML is missing or the device cannot be read.
    static bool query(int index, DeviceInfo *out, QString *why);
};

} // namespace ak
