#include "models/throughputchartmodel.h"

#include <cmath>

namespace ak {

ThroughputChartModel::ThroughputChartModel(QObject *parent)
    : RowTableModel<ChartPoint>(parent)
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
    // Speedup mode divides every experiment by one PyTorch time, the one timed with the kernel's
    // baseline: the paired speedup re-times PyTorch each experiment, and on a CPU that noise put kept
    // points under reverted ones while the loop keeps on the kernel's own latency (#41).
    const Experiment *base = nullptr;
    for (const Experiment *e : mine)
        if (e->status == ExperimentStatus::Baseline && e->metrics.latencyUs > 0 && e->metrics.speedup > 0)
            base = e;
    QVector<ChartPoint> points;
    int firstBestRow = -1;
    double best = std::nan("");
    for (const Experiment *e : mine) {
        const double y = metric == Metric::PercentOfRoof ? e->metrics.pctPeak
            : base && e->metrics.latencyUs > 0
            ? base->metrics.speedup * base->metrics.latencyUs / e->metrics.latencyUs
            : e->metrics.speedup;
        if (!Metrics::has(y))
            continue;
        // The line is the head, what the keep rule compares with: each keep replaces it.
        const bool kept = e->status == ExperimentStatus::Kept || e->status == ExperimentStatus::Baseline;
        if (kept)
            best = y;
        if (kept && firstBestRow < 0)
            firstBestRow = int(points.size());
        points.append({ e->id, y, best, e->status });
    }
    m_firstBestRow = firstBestRow;
    if (key == m_key && metric == m_metric && kernel.maxSpeedup == m_headroom) {
        setRows(std::move(points));
        return;
    }
    m_key = key;
    m_metric = metric;
    m_headroom = kernel.maxSpeedup;
    resetRows(std::move(points));
}

void ThroughputChartModel::clear()
{
    m_key.clear();
    m_firstBestRow = -1;
    m_headroom = 0;
    resetRows({});
}

int ThroughputChartModel::rowOfExperiment(int id) const
{
    for (int r = 0; r < rows().size(); ++r)
        if (rows().at(r).id == id)
            return r;
    return -1;
}

bool ThroughputChartModel::hasRoof() const
{
    return m_metric == Metric::PercentOfRoof || m_headroom > 0;
}

QString ThroughputChartModel::yAxisTitle() const
{
    return m_metric == Metric::PercentOfRoof ? tr("% of roof") : tr("speedup vs PyTorch at baseline");
}

QVariant ThroughputChartModel::cell(const ChartPoint &p, int column, int role) const
{
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    switch (column) {
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

QVariant ThroughputChartModel::header(int column, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
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
