#pragma once

#include "deviceinfo.h"
#include "tunespace.h"

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
    // (BLOCK_M x BLOCK_K + BLOCK_K x BLOCK_N) elements of `dtype` in shared memory. True when the
    // limit (0) or the tile is unknown.
    static bool fitsSharedMemory(const TuneConfig &config, double limitKiB, const QString &dtype);
};

} // namespace ak
