#pragma once

#include <QWidget>

class QChart;
class QChartView;
class QStackedLayout;

namespace ak {

class EmptyState;

// What every chart of the window shares: a QChart in a QChartView, shown when there is something to
// draw and an EmptyState (what is missing, what to do) when not; the legend at the bottom, small
// margins, antialiasing; and the palette: background, axes, grid and legend painted from it when
// built and again on every PaletteChange (applyChartPalette), so a theme switched live reaches it.
class ChartPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ChartPanel(QWidget *parent = nullptr);

    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_view; }
    EmptyState *emptyState() const { return m_empty; }
    bool isShowingChart() const;

protected:
    // Call once the series and axes are added: the view takes the chart, the palette the axes.
    void finishSetup();
    void showChart();
    void showEmpty();
    void setEmptyText(const QString &title, const QString &body);
    void changeEvent(QEvent *event) override;

private:
    QStackedLayout *m_stack;
    EmptyState *m_empty;
    QChartView *m_view;
    QChart *m_chart;
};

} // namespace ak
