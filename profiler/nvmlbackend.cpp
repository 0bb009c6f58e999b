#include "nvmlbackend.h"

#include "dynamiclibrary.h"

namespace ak {

namespace {

// The few NVML declarations needed, from nvml.h (stable C ABI; the _v2 entry points exist since 2013).
using nvmlReturn_t = int;
using nvmlDevice_t = void *;
struct nvmlMemory_t
{
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
constexpr int NVML_SUCCESS = 0;
constexpr int NVML_CLOCK_SM = 1;
constexpr int NVML_CLOCK_MEM = 2;

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using HandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t *);
using GetNameFn = nvmlReturn_t (*)(nvmlDevice_t, char *, unsigned int);
using MaxClockFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int *);
using BusWidthFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int *);
using CapabilityFn = nvmlReturn_t (*)(nvmlDevice_t, int *, int *);
using MemoryInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t *);

} // namespace

bool NvmlBackend::query(int index, DeviceInfo *out, QString *why)
{
    DynamicLibrary lib({ QStringLiteral("libnvidia-ml.so.1"), QStringLiteral("libnvidia-ml.so") });
    if (!lib.isLoaded()) {
        *why = QStringLiteral("NVML not found (%1)").arg(lib.error());
        return false;
    }
    const auto init = lib.resolve<InitFn>("nvmlInit_v2");
    const auto shutdown = lib.resolve<ShutdownFn>("nvmlShutdown");
    const auto byIndex = lib.resolve<HandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
    const auto getName = lib.resolve<GetNameFn>("nvmlDeviceGetName");
    if (!init || !shutdown || !byIndex || !getName) {
        *why = QStringLiteral("%1 lacks the NVML entry points needed").arg(lib.fileName());
        return false;
    }
    if (init() != NVML_SUCCESS) {
        *why = QStringLiteral("nvmlInit failed (driver not loaded?)");
        return false;
    }
    nvmlDevice_t dev = nullptr;
    if (byIndex(unsigned(index), &dev) != NVML_SUCCESS) {
        shutdown();
        *why = QStringLiteral("NVML has no device %1").arg(index);
        return false;
    }
    char name[256] = {};
    if (getName(dev, name, sizeof name) == NVML_SUCCESS)
        out->name = QString::fromUtf8(name);
    unsigned int v = 0;
    if (const auto clock = lib.resolve<MaxClockFn>("nvmlDeviceGetMaxClockInfo")) {
        if (clock(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS && v > 0)
            out->boostClockMHz = v;
        if (clock(dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS && v > 0)
            out->memoryClockMHz = v;
    }
    if (const auto bus = lib.resolve<BusWidthFn>("nvmlDeviceGetMemoryBusWidth")) {
        if (bus(dev, &v) == NVML_SUCCESS && v > 0)
            out->memoryBusWidthBits = int(v);
    }
    if (const auto cap = lib.resolve<CapabilityFn>("nvmlDeviceGetCudaComputeCapability")) {
        int major = 0, minor = 0;
        if (cap(dev, &major, &minor) == NVML_SUCCESS && major > 0)
            out->computeCapability = QStringLiteral("%1.%2").arg(major).arg(minor);
    }
    if (const auto mem = lib.resolve<MemoryInfoFn>("nvmlDeviceGetMemoryInfo")) {
        nvmlMemory_t m {};
        if (mem(dev, &m) == NVML_SUCCESS && m.total > 0)
            out->memoryGiB = double(m.total) / (1024.0 * 1024.0 * 1024.0);
    }
    shutdown();
    out->available = true;
    out->vendor = QStringLiteral("nvidia");
    return true;
}

} // namespace ak
