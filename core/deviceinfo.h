#pragma once

#include <nlohmann/json_fwd.hpp>

#include <QMetaType>
#include <QString>

#include <array>

namespace ak {

// Precisions for which a device's dense peak is stored separately (never fp16 copied into every slot).
enum class Precision { FP32 = 0, TF32, FP16, BF16, FP8, Count };

QString precisionName(Precision p);
// Accepts "fp32", "float32", "bf16", "bfloat16", "fp16", "half", "tf32", "fp8"; returns false if unknown.
bool parsePrecision(const QString &text, Precision *out);

// What the device measurably does (worker op `roofs`, profiler/python/akroofs.py): a large copy's
// bandwidth and the best matmul throughput at the run's dtype. "% of roof" is taken against these
// where known, the spec sheet's beside them (docs/numbers.md). All 0: not measured.
struct MeasuredRoofs
{
    double bandwidthGBs = 0; // read + written bytes of a device-to-device copy per second, 1e9
    std::array<double, int(Precision::Count)> tflops {}; // best torch.matmul, dense, per precision measured
    QString key; // what the measurement stands for: device, driver, clocks, torch, dtype
    QString measuredAt; // ISO 8601 UTC
    bool cached = false; // read from the per-user cache, not measured by this call

    bool known() const;
    // "copy 3010 GB/s · bf16 matmul 701 TFLOP/s (measured 2026-12-07T13:00:00Z)"
    QString summary() const;
    // The worker op's result, or run.json's "measured_roofs"; anything missing reads as 0.
    static MeasuredRoofs fromJson(const nlohmann::json &o);
    nlohmann::json toJson() const;
};

// What the product knows about the compute device a run targets. A value type: it crosses threads
// and process boundaries (run.json) by copy.
struct DeviceInfo
{
    bool available = false; // false: no GPU found (a normal state, not an error)
    QString name; // "NVIDIA H200", "CPU (x86_64, 2 threads)"
    QString vendor; // "nvidia", "amd", "cpu"
    QString detectedBy; // "nvml", "cuda-driver", "rocm-smi", "torch", "cpu"
    QString databaseKey; // key in resources/gpus.json, empty when estimated
    QString computeCapability; // "9.0", "gfx942", empty for CPU
    int smCount = 0; // SMs or CUs
    double boostClockMHz = 0;
    double memoryClockMHz = 0;
    int memoryBusWidthBits = 0;
    double memoryGiB = 0;
    double l2MiB = 0;
    double bandwidthGBs = 0; // peak DRAM bandwidth, GB/s (1e9)
    std::array<double, int(Precision::Count)> peakTflops {}; // dense, per precision; 0 = unknown
    bool estimated = false; // peaks estimated from SM count x clock, not from the database
    QString note; // where the numbers came from
    MeasuredRoofs measured; // the roofs the device reached when measured; spec ones above

    double peak(Precision p) const { return peakTflops[size_t(p)]; }
    // "cpu", "cuda" or "cuda:N": the torch device names a loop (one worker each) can be given.
    static bool isDeviceName(const QString &name);
    // One line for a status bar: "NVIDIA H200 · 132 SMs · 4.8 TB/s · bf16 989 TFLOP/s".
    QString summary() const;

    // run.json's "device" object (docs/run-format.md); fields missing or of another type read as
    // unknown (0, empty), never an error: an older run still loads.
    static DeviceInfo fromJson(const nlohmann::json &o);
    nlohmann::json toJson() const;
};

} // namespace ak

Q_DECLARE_METATYPE(ak::DeviceInfo)
