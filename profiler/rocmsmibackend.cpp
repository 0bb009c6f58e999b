#include "rocmsmibackend.h"

#include "dynamiclibrary.h"

#include <QFileInfo>

#include <cstddef>
#include <cstdint>

namespace ak {

namespace {

// From rocm_smi.h: rsmi_status_t is an enum (0 = RSMI_STATUS_SUCCESS); RSMI_MEM_TYPE_VRAM = 0.
using rsmi_status_t = int;
using InitFn = rsmi_status_t (*)(uint64_t);
using ShutdownFn = rsmi_status_t (*)();
using NumDevicesFn = rsmi_status_t (*)(uint32_t *);
using NameFn = rsmi_status_t (*)(uint32_t, char *, size_t);
using MemoryTotalFn = rsmi_status_t (*)(uint32_t, int, uint64_t *);

} // namespace

bool RocmSmiBackend::query(int index, DeviceInfo *out, QString *why)
{
    // Without the amdgpu compute driver there is nothing to ask, and rsmi_init would print its
    // complaints ("Failed to open drm root directory", "Exception caught: rsmi_init") into every
    // command's stderr on NVIDIA and CPU-only machines.
    if (!QFileInfo::exists(QStringLiteral("/dev/kfd"))) {
        *why = QStringLiteral("ROCm SMI not asked: no AMD GPU driver (/dev/kfd absent)");
        return false;
    }
    DynamicLibrary lib({ QStringLiteral("librocm_smi64.so.1"), QStringLiteral("librocm_smi64.so"),
        QStringLiteral("/opt/rocm/lib/librocm_smi64.so") });
    if (!lib.isLoaded()) {
        *why = QStringLiteral("ROCm SMI not found (%1)").arg(lib.error());
        return false;
    }
    const auto init = lib.resolve<InitFn>("rsmi_init");
    const auto shutdown = lib.resolve<ShutdownFn>("rsmi_shut_down");
    const auto count = lib.resolve<NumDevicesFn>("rsmi_num_monitor_devices");
    const auto name = lib.resolve<NameFn>("rsmi_dev_name_get");
    if (!init || !shutdown || !count || !name) {
        *why = QStringLiteral("%1 lacks the ROCm SMI entry points needed").arg(lib.fileName());
        return false;
    }
    if (init(0) != 0) {
        *why = QStringLiteral("rsmi_init failed");
        return false;
    }
    uint32_t n = 0;
    if (count(&n) != 0 || index < 0 || uint32_t(index) >= n) {
        shutdown();
        *why = QStringLiteral("ROCm SMI has no device %1").arg(index);
        return false;
    }
    char buf[256] = {};
    if (name(uint32_t(index), buf, sizeof buf) == 0)
        out->name = QString::fromUtf8(buf);
    if (const auto mem = lib.resolve<MemoryTotalFn>("rsmi_dev_memory_total_get")) {
        uint64_t bytes = 0;
        if (mem(uint32_t(index), 0, &bytes) == 0 && bytes > 0)
            out->memoryGiB = double(bytes) / (1024.0 * 1024.0 * 1024.0);
    }
    shutdown();
    out->available = !out->name.isEmpty();
    out->vendor = QStringLiteral("amd");
    if (!out->available)
        *why = QStringLiteral("ROCm SMI returned no name for device %1").arg(index);
    return out->available;
}

} // namespace ak
