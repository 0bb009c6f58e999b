#pragma once

#include <QStringList>
#include <QWidget>

class QBarCategoryAxis;
class QBarSet;
class QChart;
class QChartView;
class QHorizontalStackedBarSeries;
class QStackedLayout;
class QValueAxis;

namespace ak {

class EmptyState;
struct ModelVerification;

// Each kernel's measured contribution inside the model (verification.json effect_pct: % of the
// model's time it saves, leaving it out of the set) as horizontal bars, final-set kernels in one
// colour and left-out ones in another. Kernels verify could not time (not plugged, parity failed)
// have no bar; the model view lists them with their reason.
class ModelEffectChart : public QWidget
{
    Q_OBJECT
public:
    explicit ModelEffectChart(QWidget *parent = nullptr);

    void setVerification(const ModelVerification &verification);
    void clear();

    bool isShowingChart() const;
    QChart *chart() const { return m_chart; }
    // One category per timed kernel, top to bottom in the chart's order; the value of a kernel is in
    // the set it belongs to and 0 in the other (stacked, so each kernel has one bar).
    QStringList categories() const { return m_categories; }
    QBarSet *finalSetBars() const { return m_final; }
    QBarSet *leftOutBars() const { return m_leftOut; }

protected:
    // A palette switched live (a dark theme) repaints the chart's background, axes and legend.
    void changeEvent(QEvent *event) override;

private:
    QStackedLayout *m_stack;
    EmptyState *m_empty;
    QChartView *m_view;
    QChart *m_chart;
    QHorizontalStackedBarSeries *m_series;
    QBarSet *m_final;
    QBarSet *m_leftOut;
    QBarCategoryAxis *m_kernels;
    QValueAxis *m_effect;
    QStringList m_categories;
};

} // namespace ak
