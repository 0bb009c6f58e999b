#pragma once

#include "deviceinfo.h"
#include "opcall.h"

#include <QString>

namespace ak {

// The least work a kernel must do (FLOPs and DRAM bytes, from its aten op and shapes) and the time
// that work takes at the device's peaks: the floor no implementation can beat.
struct RooflineEstimate
{
    bool known = false; // false: no formula for this op/shape, or the device has no peak for it
    double flops = 0; // per call
    double bytes = 0; // per call, minimum DRAM traffic (inputs read once, outputs written once)
    double floorUs = 0; // max(flops / peak, bytes / bandwidth), per call
    QString bound; // "compute" | "memory" | ""
    QString formula; // which formula was used, for tooltips and docs ("matmul 2MNK")
    QString why; // when !known: the reason
};

class Roofline
{
public:
    // Formulas follow the work the kernel's own aten op does (a copy_ inside addmm is a copy, not a
    // GEMM); opType only decides between formulas when the aten op is missing. `runDtype` is used
    // when the profiler recorded no dtype for the op's inputs.
    static RooflineEstimate estimate(
        const OpCall &call, const QString &opType, const QString &runDtype, const DeviceInfo &device);

    // FLOPs and bytes only (no device): known=false when there is no formula.
    static RooflineEstimate work(const OpCall &call, const QString &opType, const QString &runDtype);

    // Floor of given work on a device at a precision; known=false when a needed peak is 0.
    static RooflineEstimate floor(RooflineEstimate work, Precision precision, const DeviceInfo &device);

    // Bytes per element for "fp32", "bf16", "int64", ...; 0 if unknown.
    static int elementSize(const QString &dtype);
};

} // namespace ak
