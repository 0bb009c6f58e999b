#pragma once

#include "deviceinfo.h"

namespace ak {

// Reads an AMD GPU through ROCm SMI (librocm_smi64, dlopen'ed): name and memory size. CU count and
// peaks come from the GPU database (or the worker's torch fallback): ROCm SMI does not report them.
class RocmSmiBackend
{
public:
    static bool query(int index, DeviceInfo *out, QString *why);
};

} // namespace ak
