#pragma once

#include "experiment.h"

#include <QColor>

class QPalette;

namespace ak {

// Outcome and status colours as text on a palette's base: the project's colours (core's outcomeColor)
// where they read, else lightened on a dark base or darkened on a light one until they reach a contrast
// of 4.5:1 (WCAG AA for text), as ErrorTint does for the error red. A fixed dark green "keep" all but
// vanished on a dark grey table.
namespace OutcomeColors {

// WCAG 2 contrast ratio of two colours, 1 to 21.
double contrast(const QColor &a, const QColor &b);
// `wanted`, moved in lightness only as far as needed to read at `minimum`:1 on `background`: 4.5 for
// text (WCAG AA), 3 for lines and marks (WCAG's non-text contrast; the charts' series).
QColor readableOn(const QColor &wanted, const QColor &background, double minimum = 4.5);
constexpr double kGraphicContrast = 3.0;
// The outcome's colour as text on `palette`'s Base (the tables' background).
QColor text(ExperimentOutcome outcome, const QPalette &palette);

} // namespace OutcomeColors

} // namespace ak
