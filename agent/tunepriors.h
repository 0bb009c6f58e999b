#pragma once

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
};

} // namespace ak
