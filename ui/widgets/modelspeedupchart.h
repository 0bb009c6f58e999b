#pragma once

#include "widgets/chartpanel.h"
#include <QPair>
#include <QVector>

class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace ak {

struct RunSnapshot;

// The run-level chart: the projected whole-model speedup (Amdahl over each kernel's share and its
// kept head, RunStats::projectedTimeline) as a step line over wall-clock time, and the measured
// speedup of the last verification as a dashed line when there is one. Shows an EmptyState until a
// head is measured. Follows the palette live.
class ModelSpeedupChart : public ChartPanel
{
    Q_OBJECT
public:
    explicit ModelSpeedupChart(QWidget *parent = nullptr);

    void setSnapshot(const RunSnapshot &run);
    void clear();
    QLineSeries *projectedSeries() const { return m_projected; }
    QLineSeries *measuredSeries() const { return m_measured; }
    QValueAxis *yAxis() const { return m_y; }
    QDateTimeAxis *xAxis() const { return m_x; }
    // (experiment id, projection) of each point drawn, oldest first.
    const QVector<QPair<int, double>> &timeline() const { return m_timeline; }

protected:
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    // The lines' colours moved, in lightness only, until each reads at 3:1 on the palette's Base
    // (WCAG non-text contrast): the projected green and the measured blue nearly vanished on a dark one.
    void recolour();
    // As many time ticks as their labels fit side by side (at most six): a narrow chart (the Model
    // tab beside a docked panel) cut six labels to "21:1…".
    void fitTicks();
    // The legend's labels in full when they fit the panel's width, else shorter ("measured 1.03×",
    // then "measured"): Qt Charts cut them to "original m…" beside a docked panel. The series keep
    // their full names.
    void fitLegend();

    QLineSeries *m_projected;
    QLineSeries *m_measured;
    QLineSeries *m_original;
    QDateTimeAxis *m_x;
    QValueAxis *m_y;
    QVector<QPair<int, double>> m_timeline;
    QString m_projectedRatio;
    QString m_measuredRatio;
};

} // namespace ak
