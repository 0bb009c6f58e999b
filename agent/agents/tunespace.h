#pragma once

#include "kernelstaticinfo.h"

#include <QMap>
#include <QString>
#include <QVector>

namespace ak {

// One searchable constant and its candidate values, ascending.
struct TuneAxis
{
    QString name;
    bool isInteger = true;
    QVector<double> values;
};

using TuneConfig = QMap<QString, double>; // constant name -> value

// The search space a kernel.py declares: its tunable constants with TUNE_SPACE candidates, or, for
// an integer constant without candidates, the powers of two within bounds that suit its name
// (*WARPS* 1..32, *STAGES* 1..8, *GROUP* and *SPLIT* 1..64, others 1..8192) plus its own value. Float
// constants without TUNE_SPACE are not searched: they are usually numerics (eps), not performance knobs.
class TuneSpace
{
public:
    static TuneSpace fromStaticInfo(const KernelStaticInfo &info);

    const QVector<TuneAxis> &axes() const { return m_axes; }
    bool isEmpty() const { return m_axes.isEmpty(); }
    double gridSize() const;

    // The values the axes have in a kernel; false when one of them is missing from it.
    bool configOf(const KernelStaticInfo &info, TuneConfig *out) const;
    // Index of value on the axis, -1 when it is not a candidate.
    int indexOf(int axis, double value) const;

    // Canonical text of a configuration, used as its identity ("BLOCK_SIZE=256 NUM_WARPS=4").
    static QString key(const TuneConfig &config);
    // "256" for integers, "0.25" for floats.
    static QString format(double value, bool isInteger);
    static QVector<double> powersOfTwoAround(const QString &name, double value);

private:
    QVector<TuneAxis> m_axes;
};

} // namespace ak
