#pragma once

class QChart;
class QChartView;
class QPalette;

namespace ak {

// Qt Charts draws with its own theme, not the widget palette: a chart stayed white in a dark window.
// This paints a chart's background, titles, axis labels, grid and legend from `palette` (Base for the
// background, Text for the ink) and leaves the series' own colours (outcome colours) alone. Each chart
// widget calls it when built and again on QEvent::PaletteChange, so a theme switched live follows.
void applyChartPalette(QChartView *view, const QPalette &palette);

} // namespace ak
