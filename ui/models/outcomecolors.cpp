#include "models/outcomecolors.h"

#include <QPalette>

#include <cmath>

namespace ak::OutcomeColors {

namespace {

double channel(double c)
{
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

double luminance(const QColor &c)
{
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

} // namespace

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a);
    const double lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor readableOn(const QColor &wanted, const QColor &background, double minimum)
{
    const double kMinimum = minimum;
    if (contrast(wanted, background) >= kMinimum)
        return wanted; // as given: an HSL round trip would change it in the last bits
    QColor c = wanted.toHsl();
    const bool darkBackground = luminance(background) < 0.18;
    // Lightness steps keep the hue: a lighter green on dark, a darker amber on light.
    for (int step = 0; step < 64 && contrast(c, background) < kMinimum; ++step) {
        const int l = c.lightness();
        const int next = darkBackground ? std::min(255, l + 4) : std::max(0, l - 4);
        c = QColor::fromHsl(c.hslHue(), c.hslSaturation(), next);
        if (next == 0 || next == 255)
            break;
    }
    return c.toRgb();
}

QColor text(ExperimentOutcome outcome, const QPalette &palette)
{
    return readableOn(QColor(QLatin1String(outcomeColor(outcome))), palette.color(QPalette::Base));
}

} // namespace ak::OutcomeColors
