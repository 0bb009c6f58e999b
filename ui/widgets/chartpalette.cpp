#include "widgets/chartpalette.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QLegend>
#include <QPalette>

namespace ak {

void applyChartPalette(QChartView *view, const QPalette &palette)
{
    QChart *chart = view->chart();
    const QColor base = palette.color(QPalette::Base);
    const QColor ink = palette.color(QPalette::Text);
    // Grid and axis lines: the ink faded towards the background, so they read in light and dark alike.
    QColor axisLine = ink;
    axisLine.setAlphaF(0.45);
    QColor grid = ink;
    grid.setAlphaF(0.14);
    QColor minorGrid = ink;
    minorGrid.setAlphaF(0.06);

    view->setBackgroundBrush(base);
    chart->setBackgroundBrush(base);
    chart->setBackgroundPen(Qt::NoPen);
    chart->setPlotAreaBackgroundVisible(false);
    chart->setTitleBrush(ink);
    chart->legend()->setLabelColor(ink);
    for (QAbstractAxis *axis : chart->axes()) {
        axis->setLabelsColor(ink);
        axis->setTitleBrush(ink);
        axis->setLinePenColor(axisLine);
        axis->setGridLineColor(grid);
        axis->setMinorGridLineColor(minorGrid);
    }
}

} // namespace ak
