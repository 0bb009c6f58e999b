#pragma once

#include "experiment.h"
#include "kernelrecord.h"

#include <QAbstractTableModel>
#include <QVector>

#include <cmath>

namespace ak {

// heaptrack's ChartModel: rows are points in time (measured experiments of one kernel, in id order),
// one column per series, raw doubles in DisplayRole because QVXYModelMapper reads that role.
//
// Y is "% of the roof" when the run knows the device's peak, else "speedup vs PyTorch" (a CPU run
// or an unknown GPU): the chart never plots a percentage of a peak nobody measured.
class ThroughputChartModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns {
        ExperimentColumn, // x: experiment id
        MeasuredColumn, // y of each correct, measured attempt
        BestColumn, // best kept so far (NaN before the first kept row; see firstBestRow)
        RoofColumn, // 100 % in roof mode; the kernel's headroom in speedup mode (NaN if unknown)
        ColumnCount
    };
    Q_ENUM(Columns)
    enum class Metric { PercentOfRoof, Speedup };

    explicit ThroughputChartModel(QObject *parent = nullptr);

    // Another kernel (the chart shows one at a time) resets the model; the same kernel again, as a
    // live reload gives it, inserts the new experiments' rows and signals the changed ones.
    void setKernel(const KernelRecord &kernel, const QString &key, const QVector<Experiment> &allExperiments);
    void clear();

    Metric metric() const { return m_metric; }
    QString kernelKey() const { return m_key; }
    int firstBestRow() const { return m_firstBestRow; } // -1: nothing kept yet
    bool hasRoof() const;
    // The outcome of the experiment at `row` (the chart colours its point by it) and the row of an
    // experiment id (-1 when it has no point: failed, or another kernel's).
    ExperimentStatus statusAt(int row) const { return m_points.at(row).status; }
    int rowOfExperiment(int id) const;
    QString yAxisTitle() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    struct Point
    {
        int id;
        double y;
        double best;
        ExperimentStatus status;
        bool operator==(const Point &o) const
        {
            // NaN (no kept experiment yet) equals NaN: an unchanged row must compare equal.
            auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
            return id == o.id && same(y, o.y) && same(best, o.best) && status == o.status;
        }
    };
    QVector<Point> m_points;
    QString m_key;
    Metric m_metric = Metric::PercentOfRoof;
    double m_headroom = 0;
    int m_firstBestRow = -1;
};

} // namespace ak
