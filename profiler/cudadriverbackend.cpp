#include "cudadriverbackend.h"

#include "dynamiclibrary.h"

#include <cstddef>

namespace ak {

namespace {

// From cuda.h: CUresult is an enum (0 = CUDA_SUCCESS), CUdevice an int, attributes enum values.
using CUresult = int;
using CUdevice = int;
constexpr int CU_ATTR_CLOCK_RATE = 13; // kHz
constexpr int CU_ATTR_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_ATTR_MEMORY_CLOCK_RATE = 36; // kHz
constexpr int CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37; // bits
constexpr int CU_ATTR_L2_CACHE_SIZE = 38; // bytes
constexpr int CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76;

using InitFn = CUresult (*)(unsigned int);
using DeviceGetFn = CUresult (*)(CUdevice *, int);
using GetNameFn = CUresult (*)(char *, int, CUdevice);
using GetAttributeFn = CUresult (*)(int *, int, CUdevice);
using TotalMemFn = CUresult (*)(size_t *, CUdevice);

} // namespace

bool CudaDriverBackend::query(int index, DeviceInfo *out, QString *why)
{
    DynamicLibrary lib({ QStringLiteral("libcuda.so.1"), QStringLiteral("libcuda.so") });
    if (!lib.isLoaded()) {
        *why = QStringLiteral("CUDA driver not found (%1)").arg(lib.error());
        return false;
    }
    const auto init = lib.resolve<InitFn>("cuInit");
    const auto deviceGet = lib.resolve<DeviceGetFn>("cuDeviceGet");
    const auto getName = lib.resolve<GetNameFn>("cuDeviceGetName");
    const auto attribute = lib.resolve<GetAttributeFn>("cuDeviceGetAttribute");
    if (!init || !deviceGet || !getName || !attribute) {
        *why = QStringLiteral("%1 lacks the CUDA driver entry points needed").arg(lib.fileName());
        return false;
    }
    CUresult rc = init(0);
    if (rc != 0) {
        *why = QStringLiteral("cuInit failed (CUresult %1)").arg(rc);
        return false;
    }
    CUdevice dev = 0;
    if (deviceGet(&dev, index) != 0) {
        *why = QStringLiteral("the CUDA driver has no device %1").arg(index);
        return false;
    }
    auto attr = [&](int which) {
        int v = 0;
        return attribute(&v, which, dev) == 0 ? v : 0;
    };
    char name[256] = {};
    if (out->name.isEmpty() && getName(name, int(sizeof name), dev) == 0)
        out->name = QString::fromUtf8(name);
    out->smCount = attr(CU_ATTR_MULTIPROCESSOR_COUNT);
    if (out->computeCapability.isEmpty()) {
        const int major = attr(CU_ATTR_COMPUTE_CAPABILITY_MAJOR);
        if (major > 0)
            out->computeCapability
                = QStringLiteral("%1.%2").arg(major).arg(attr(CU_ATTR_COMPUTE_CAPABILITY_MINOR));
    }
    if (out->boostClockMHz <= 0)
        out->boostClockMHz = attr(CU_ATTR_CLOCK_RATE) / 1000.0;
    if (out->memoryClockMHz <= 0)
        out->memoryClockMHz = attr(CU_ATTR_MEMORY_CLOCK_RATE) / 1000.0;
    if (out->memoryBusWidthBits <= 0)
        out->memoryBusWidthBits = attr(CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH);
    if (const int l2 = attr(CU_ATTR_L2_CACHE_SIZE); l2 > 0)
        out->l2MiB = l2 / (1024.0 * 1024.0);
    if (const auto totalMem = lib.resolve<TotalMemFn>("cuDeviceTotalMem_v2");
        totalMem && out->memoryGiB <= 0) {
        size_t bytes = 0;
        if (totalMem(&bytes, dev) == 0)
            out->memoryGiB = double(bytes) / (1024.0 * 1024.0 * 1024.0);
    }
    out->available = true;
    out->vendor = QStringLiteral("nvidia");
    return true;
}

} // namespace ak
