#pragma once

#include "agents/tunespace.h"
#include "deviceinfo.h"

#include <QString>
#include <QVector>

namespace ak {

// Configurations known to be good for an op type on an architecture family, which the tune agent
// tries before it searches (resources/tune-priors.json, compiled in). A prior names only some
// constants; applied to a kernel it sets those its space offers (with a value among the candidates)
// and leaves the rest as they are.
class TunePriors
{
public:
    struct Prior
    {
        TuneConfig config;
        QString why; // where it comes from, for the experiment's description
    };

    // The priors for `opType` on `architecture` ("hopper", "cpu", … PromptBuilder::architectureFamily),
    // in the file's order.
    static QVector<Prior> forKernel(const QString &opType, const QString &architecture);
    // `base` with the prior's constants that `space` offers; false when it offers none of them.
    static bool apply(
        const TuneConfig &prior, const TuneSpace &space, const TuneConfig &base, TuneConfig *out);

    // The shared memory one block may use on `device` in KiB (the file's table by compute
    // capability); 0 when unknown (the CPU, an unlisted GPU).
    static double sharedMemoryKiB(const DeviceInfo &device);
    // Whether a tiled kernel's configuration fits `limitKiB` (sharedMemoryKiB, asked once by the
    // caller): a config with BLOCK_M, BLOCK_N and BLOCK_K (and NUM_STAGES, else 1) keeps NUM_STAGES x
    // (BLOCK_M x BLOCK_K + BLOCK_K x BLOCK_N) elements of `dtype` in shared memory; fused_mlp's
    // gate/up kernel two weight tiles per stage; with TMA 1 where `tensorDescriptors` (compute
    // capability 9+) also the BLOCK_M x BLOCK_N output tile its store stages. (Checked against the
    // compile failures Triton 3.6 reported on an H100: docs/agents.md.) True when the limit (0) or
    // the tile is unknown.
    static bool fitsSharedMemory(const TuneConfig &config, double limitKiB, const QString &dtype,
        const QString &opType = QString(), bool tensorDescriptors = false);
    // Whether `device` has tensor descriptors (TMA): an NVIDIA GPU of compute capability 9 or more.
    static bool hasTensorDescriptors(const DeviceInfo &device);
};

} // namespace ak
