#pragma once

#include "deviceinfo.h"
#include "kernelrecord.h"
#include "opcall.h"
#include "roofline.h"

#include <QString>
#include <QVector>

#include <nlohmann/json.hpp>

namespace ak {

// A whole-model profile after classification, roofline and Amdahl ranking: what profile.json holds.
// Built from the worker's `profile` reply (profiler/python/akprofile.py) so the GUI and the CLI
// derive identical numbers.
struct ProfileReport
{
    QString model; // as given: example name or path
    QString modelPath; // the file that was run
    QString activity; // "cuda" | "cpu": what was timed
    QString dtype; // "bf16" | "fp16" | "fp32"
    QString torchVersion;
    QString python;
    int warmup = 0;
    int iterations = 0;
    double totalUs = 0; // per iteration, sum of all kernel rows
    double wallMs = 0; // per iteration, host wall clock while profiling
    DeviceInfo device; // roofs are computed against this
    QVector<KernelRecord> kernels; // rank order
    QVector<OpCall> calls; // parallel to kernels
    QVector<RooflineEstimate> roofs; // parallel to kernels
    double fraction = 0.9; // of the roof, for the model-speedup numbers

    // Classifies, estimates and ranks the worker's raw rows. Returns false with *error when the
    // reply lacks the fields it needs (names the field).
    static bool fromWorker(
        const nlohmann::json &result, const DeviceInfo &device, ProfileReport *out, QString *error);

    // Whole-model speedup if the top k kernels reached `fraction` of their roofs.
    double projected(int topK) const;

    nlohmann::json toJson() const;
    static QString shapeText(const std::vector<int64_t> &shape); // "[4096, 2048]"
};

} // namespace ak
