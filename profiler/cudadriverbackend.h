#pragma once

#include "deviceinfo.h"

namespace ak {

// Reads a GPU through the CUDA driver API (libcuda, dlopen'ed): name, SM count, compute capability,
// clock, memory clock and bus width, L2 size, memory size.
class CudaDriverBackend
{
public:
    // Fills only fields that are still empty/zero in *out, so NVML's max clocks win over the driver's.
    static bool query(int index, DeviceInfo *out, QString *why);
};

} // namespace ak
