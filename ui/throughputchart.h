#pragma once

#include <QWidget>

class QChart;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QStackedLayout;
class QValueAxis;
class QVXYModelMapper;

namespace ak {

class EmptyState;
class ThroughputChartModel;

// A view of ThroughputChartModel: attempts as points, the best kept so far as a line, the roof as a
// line, each series bound to model columns through QVXYModelMapper. Shows an EmptyState when the
// kernel has no measured experiment.
class ThroughputChart : public QWidget
{
    Q_OBJECT
public:
    explicit ThroughputChart(ThroughputChartModel *model, QWidget *parent = nullptr);

    void setEmptyMessage(const QString &title, const QString &body);
    bool isShowingChart() const;
    QChart *chart() const { return m_chart; }
    EmptyState *emptyState() const { return m_empty; }

private:
    void modelReset();

    ThroughputChartModel *m_model;
    QStackedLayout *m_stack;
    EmptyState *m_empty;
    QChartView *m_view;
    QChart *m_chart;
    QScatterSeries *m_attempts;
    QLineSeries *m_best;
    QLineSeries *m_roof;
    QVXYModelMapper *m_attemptsMapper;
    QVXYModelMapper *m_bestMapper;
    QVXYModelMapper *m_roofMapper;
    QValueAxis *m_x;
    QValueAxis *m_y;
};

} // namespace ak
