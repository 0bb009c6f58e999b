#include "agents/tunespace.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

namespace ak {
namespace {

bool same(double a, double b)
{
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(a));
}

void sortUnique(QVector<double> *v)
{
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end(), same), v->end());
}

} // namespace

QVector<double> TuneSpace::powersOfTwoAround(const QString &name, double value)
{
    // Every power of two within bounds that suit the name, not a window around the value: the space
    // must not move when the best value does, or "already tried" would lose its meaning.
    const QString n = name.toUpper();
    double hi = 8192;
    if (n.contains(QLatin1String("WARPS")))
        hi = 32;
    else if (n.contains(QLatin1String("STAGES")))
        hi = 8;
    else if (n.contains(QLatin1String("GROUP")) || n.contains(QLatin1String("SPLIT")))
        hi = 64;
    QVector<double> out;
    if (value < 1 || std::floor(value) != value)
        return out;
    for (double v = 1; v <= hi; v *= 2)
        out.append(v);
    out.append(value); // kept even when out of bounds or not a power of two: it is where the search starts
    sortUnique(&out);
    return out;
}

TuneSpace TuneSpace::fromStaticInfo(const KernelStaticInfo &info)
{
    TuneSpace space;
    for (const TunableConstant &c : info.constants) {
        TuneAxis axis;
        axis.name = c.name;
        axis.isInteger = c.isInteger;
        if (!c.candidates.isEmpty()) {
            axis.values = c.candidates;
            axis.values.append(c.value); // the current value stays representable
            sortUnique(&axis.values);
        } else if (c.isInteger) {
            axis.values = powersOfTwoAround(c.name, c.value);
        }
        if (axis.values.size() >= 2)
            space.m_axes.append(axis);
    }
    return space;
}

double TuneSpace::gridSize() const
{
    double n = m_axes.isEmpty() ? 0 : 1;
    for (const TuneAxis &a : m_axes)
        n *= double(a.values.size());
    return n;
}

bool TuneSpace::configOf(const KernelStaticInfo &info, TuneConfig *out) const
{
    TuneConfig config;
    for (const TuneAxis &a : m_axes) {
        const auto it = std::find_if(info.constants.cbegin(), info.constants.cend(),
            [&](const TunableConstant &c) { return c.name == a.name; });
        if (it == info.constants.cend())
            return false;
        config.insert(a.name, it->value);
    }
    *out = config;
    return true;
}

int TuneSpace::indexOf(int axis, double value) const
{
    const QVector<double> &v = m_axes.at(axis).values;
    for (int i = 0; i < v.size(); ++i) {
        if (same(v.at(i), value))
            return i;
    }
    return -1;
}

QString TuneSpace::format(double value, bool isInteger)
{
    return isInteger ? QString::number(qint64(std::llround(value))) : QString::number(value, 'g', 10);
}

QString TuneSpace::key(const TuneConfig &config)
{
    QStringList parts;
    for (auto it = config.cbegin(); it != config.cend(); ++it)
        parts << it.key() + QLatin1Char('=') + QString::number(it.value(), 'g', 12);
    return parts.join(QLatin1Char(' '));
}

} // namespace ak
