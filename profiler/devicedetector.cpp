#include "devicedetector.h"
#include "profilerlog.h"

#include "cudadriverbackend.h"
#include "gpudatabase.h"
#include "nvmlbackend.h"
#include "rocmsmibackend.h"

namespace ak {

DeviceInfo DeviceDetector::detect(int index, QStringList *log)
{
    DeviceInfo d;
    QString why;
    QStringList sources;
    if (NvmlBackend::query(index, &d, &why))
        sources << QStringLiteral("nvml");
    else if (log)
        *log << QStringLiteral("nvml: ") + why;
    if (CudaDriverBackend::query(index, &d, &why))
        sources << QStringLiteral("cuda-driver");
    else if (log)
        *log << QStringLiteral("cuda-driver: ") + why;
    if (sources.isEmpty()) {
        if (RocmSmiBackend::query(index, &d, &why))
            sources << QStringLiteral("rocm-smi");
        else if (log)
            *log << QStringLiteral("rocm-smi: ") + why;
    }
    qCDebug(lcProfiler) << "device" << index << "answered by"
                        << (sources.isEmpty() ? QStringList { "none" } : sources);
    if (sources.isEmpty()) {
        DeviceInfo none;
        none.note = QStringLiteral("no GPU found: NVML, the CUDA driver and ROCm SMI are not available");
        return none;
    }
    d.available = true;
    d.detectedBy = sources.join(QLatin1Char('+'));
    return GpuDatabase::builtin().complete(d);
}

DeviceInfo DeviceDetector::fromTorch(const nlohmann::json &r)
{
    DeviceInfo d;
    if (!r.is_object() || !r.value("available", false)) {
        d.note = r.is_object()
            ? QString::fromStdString(r.value("reason", std::string("no GPU visible to torch")))
            : QStringLiteral("no device reply");
        return d;
    }
    d.available = true;
    d.detectedBy = QStringLiteral("torch");
    d.name = QString::fromStdString(r.value("name", std::string()));
    d.vendor = QString::fromStdString(r.value("vendor", std::string("nvidia")));
    d.computeCapability = QString::fromStdString(r.value("compute_capability", std::string()));
    d.smCount = r.value("sm_count", 0);
    d.memoryGiB = r.value("total_memory_bytes", 0.0) / (1024.0 * 1024.0 * 1024.0);
    d.l2MiB = r.value("l2_bytes", 0.0) / (1024.0 * 1024.0);
    d.boostClockMHz = r.value("clock_khz", 0.0) / 1000.0;
    d.memoryClockMHz = r.value("memory_clock_khz", 0.0) / 1000.0;
    d.memoryBusWidthBits = r.value("memory_bus_bits", 0);
    return GpuDatabase::builtin().complete(d);
}

} // namespace ak
