#include "throughputchartmodel.h"

#include <cmath>

namespace ak {

ThroughputChartModel::ThroughputChartModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

void ThroughputChartModel::setKernel(
    const KernelRecord &kernel, const QString &key, const QVector<Experiment> &allExperiments)
{
    QVector<const Experiment *> mine;
    bool anyPct = false;
    for (const Experiment &e : allExperiments) {
        if (e.kernel != key || !e.metrics.correct)
            continue;
        mine.append(&e);
        anyPct = anyPct || Metrics::has(e.metrics.pctPeak);
    }
    const Metric metric = anyPct ? Metric::PercentOfRoof : Metric::Speedup;
    QVector<Point> points;
    int firstBestRow = -1;
    double best = std::nan("");
    for (const Experiment *e : mine) {
        const double y = metric == Metric::PercentOfRoof ? e->metrics.pctPeak : e->metrics.speedup;
        if (!Metrics::has(y))
            continue;
        const bool kept = e->status == ExperimentStatus::Kept || e->status == ExperimentStatus::Baseline;
        if (kept && !(y <= best))
            best = y;
        if (kept && firstBestRow < 0)
            firstBestRow = int(points.size());
        points.append({ e->id, y, best, e->status });
    }

    // A live reload of the same kernel mostly appends experiments: rows inserted, and the rows whose
    // outcome changed (a pending one accepted moves the best line) signalled, so the chart adds
    // points instead of rebuilding every series. Another kernel, or a change of what the axes mean,
    // resets.
    const int oldCount = int(m_points.size());
    bool live
        = key == m_key && metric == m_metric && kernel.maxSpeedup == m_headroom && points.size() >= oldCount;
    for (int i = 0; live && i < oldCount; ++i)
        live = points.at(i).id == m_points.at(i).id;
    if (!live) {
        beginResetModel();
        m_points = std::move(points);
        m_key = key;
        m_metric = metric;
        m_headroom = kernel.maxSpeedup;
        m_firstBestRow = firstBestRow;
        endResetModel();
        return;
    }
    int firstChanged = -1, lastChanged = -1;
    for (int i = 0; i < oldCount; ++i) {
        if (points.at(i) == m_points.at(i))
            continue;
        if (firstChanged < 0)
            firstChanged = i;
        lastChanged = i;
    }
    m_firstBestRow = firstBestRow;
    if (firstChanged >= 0) {
        for (int i = firstChanged; i <= lastChanged; ++i)
            m_points[i] = points.at(i);
        Q_EMIT dataChanged(index(firstChanged, 0), index(lastChanged, ColumnCount - 1));
    }
    if (points.size() > oldCount) {
        beginInsertRows({}, oldCount, int(points.size()) - 1);
        m_points = std::move(points);
        endInsertRows();
    }
}

void ThroughputChartModel::clear()
{
    beginResetModel();
    m_points.clear();
    m_key.clear();
    m_firstBestRow = -1;
    m_headroom = 0;
    endResetModel();
}

int ThroughputChartModel::rowOfExperiment(int id) const
{
    for (int r = 0; r < m_points.size(); ++r)
        if (m_points[r].id == id)
            return r;
    return -1;
}

bool ThroughputChartModel::hasRoof() const
{
    return m_metric == Metric::PercentOfRoof || m_headroom > 0;
}

QString ThroughputChartModel::yAxisTitle() const
{
    return m_metric == Metric::PercentOfRoof ? tr("% of roof") : tr("speedup vs PyTorch");
}

int ThroughputChartModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_points.size());
}

int ThroughputChartModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ThroughputChartModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    const Point &p = m_points.at(index.row());
    switch (index.column()) {
    case ExperimentColumn:
        return double(p.id);
    case MeasuredColumn:
        return p.y;
    case BestColumn:
        return p.best;
    case RoofColumn:
        if (m_metric == Metric::PercentOfRoof)
            return 100.0;
        return m_headroom > 0 ? m_headroom : std::nan("");
    }
    return {};
}

QVariant ThroughputChartModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case ExperimentColumn:
        return tr("Experiment");
    case MeasuredColumn:
        return tr("Attempt");
    case BestColumn:
        return tr("Best kept");
    case RoofColumn:
        return m_metric == Metric::PercentOfRoof ? tr("Device roof") : tr("Roofline limit");
    }
    return {};
}

} // namespace ak
