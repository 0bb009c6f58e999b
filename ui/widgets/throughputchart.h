#pragma once

#include "experiment.h"

#include "widgets/chartpanel.h"
#include <QColor>

class QAbstractItemModel;
class QLineSeries;
class QScatterSeries;
class QValueAxis;
class QVXYModelMapper;

namespace ak {

class ThroughputChartModel;

// A view of ThroughputChartModel: attempts as points, the best kept so far as a line, the roof as a
// line, each series bound to model columns through QVXYModelMapper. Shows an EmptyState when the
// kernel has no measured experiment.
class ThroughputChart : public ChartPanel
{
    Q_OBJECT
public:
    explicit ThroughputChart(ThroughputChartModel *model, QWidget *parent = nullptr);

    void setEmptyMessage(const QString &title, const QString &body);
    // Rings the experiment's point (the one selected in the commit list); 0 or an id without a
    // point on this chart clears the ring.
    void setSelectedExperiment(int id);
    QScatterSeries *attemptsSeries() const { return m_attempts; }
    QScatterSeries *selectedSeries() const { return m_selected; }
    QLineSeries *bestSeries() const { return m_best; }
    QValueAxis *xAxis() const { return m_x; }
    QValueAxis *yAxis() const { return m_y; }
    // The colour a point of that outcome is drawn in (kept green, pending amber, reverted grey…).
    static QColor outcomeColor(ExperimentStatus status);
    // That colour as the chart draws it: moved in lightness to 3:1 on the palette's base if needed.
    QColor pointColor(ExperimentStatus status) const;
    QLineSeries *roofSeries() const { return m_roof; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void relayout();
    void recolour(); // series colours readable on the palette's base
    void showBestAsSteps(); // the best line, from the model's BestColumn, as steps
    void showSelected();
    // Maps rows [first, first + count) of the model (count -1: to the end), or none (count 0).
    void mapRows(QVXYModelMapper *mapper, int first, int count);

    ThroughputChartModel *m_model;
    QScatterSeries *m_attempts;
    QScatterSeries *m_selected;
    int m_selectedId = 0;
    QLineSeries *m_best;
    QLineSeries *m_roof;
    QVXYModelMapper *m_attemptsMapper;
    QVXYModelMapper *m_roofMapper;
    // A model with no rows, for a line that shows nothing (see mapRows).
    QAbstractItemModel *m_noRows;
    QValueAxis *m_x;
    QValueAxis *m_y;
};

} // namespace ak
