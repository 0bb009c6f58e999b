#pragma once

#include "experiment.h"
#include "kernelrecord.h"
#include "models/rowtablemodel.h"

#include <QVector>

#include <cmath>

namespace ak {

// One point of ThroughputChartModel: a measured experiment of the kernel shown.
struct ChartPoint
{
    int id;
    double y;
    double best;
    ExperimentStatus status;
    bool operator==(const ChartPoint &o) const
    {
        // NaN (no kept experiment yet) equals NaN: an unchanged row must compare equal.
        auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
        return id == o.id && same(y, o.y) && same(best, o.best) && status == o.status;
    }
};

// heaptrack's ChartModel: rows are points in time (measured experiments of one kernel, in id order),
// one column per series, raw doubles in DisplayRole because QVXYModelMapper reads that role.
//
// Y is "% of the roof" when the run knows the device's peak, else "speedup vs PyTorch at baseline"
// (a CPU run or an unknown GPU): the chart never plots a percentage of a peak nobody measured. The
// speedup divides by one PyTorch time per kernel, its baseline's (baseline speedup × baseline latency
// ÷ latency), so it orders experiments as the keep rule does, by the kernel's own latency; the best
// line is the head (the newest keep), drawn as steps.
class ThroughputChartModel : public RowTableModel<ChartPoint>
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

    // Another kernel (the chart shows one at a time), or a change of what the axes mean, resets the
    // model; the same kernel again, as a live reload gives it, inserts the new experiments' rows and
    // signals the changed ones (RowTableModel::setRows), so the chart adds points instead of
    // rebuilding every series.
    void setKernel(const KernelRecord &kernel, const QString &key, const QVector<Experiment> &allExperiments);
    void clear();

    Metric metric() const { return m_metric; }
    QString kernelKey() const { return m_key; }
    int firstBestRow() const { return m_firstBestRow; } // -1: nothing kept yet
    bool hasRoof() const;
    // The outcome of the experiment at `row` (the chart colours its point by it) and the row of an
    // experiment id (-1 when it has no point: failed, or another kernel's).
    ExperimentStatus statusAt(int row) const { return rowAt(row).status; }
    int rowOfExperiment(int id) const;
    QString yAxisTitle() const;

protected:
    int columns() const override { return ColumnCount; }
    QVariant cell(const ChartPoint &p, int column, int role) const override;
    QVariant header(int column, int role) const override;
    QString key(const ChartPoint &p) const override { return QString::number(p.id); }
    bool sameRow(const ChartPoint &a, const ChartPoint &b) const override { return a == b; }

private:
    QString m_key;
    Metric m_metric = Metric::PercentOfRoof;
    double m_headroom = 0;
    int m_firstBestRow = -1;
};

} // namespace ak
