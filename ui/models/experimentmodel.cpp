#include "models/experimentmodel.h"

#include "models/outcomecolors.h"

#include "numberformat.h"

#include <QColor>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QPalette>

namespace ak {

namespace {

QVariant raw(double v)
{
    return std::isnan(v) ? QVariant(-1.0) : QVariant(v);
}

QString throughputText(const Metrics &m)
{
    // The bound decides which rate matters; show that one first.
    if (m.bound == QLatin1String("memory") && Metrics::has(m.gbps))
        return formatRate(m.gbps, QCoreApplication::translate("ak::ExperimentModel", "GB/s"));
    if (Metrics::has(m.tflops))
        return formatRate(m.tflops, QCoreApplication::translate("ak::ExperimentModel", "TFLOP/s"));
    return formatRate(m.gbps, QCoreApplication::translate("ak::ExperimentModel", "GB/s"));
}

QColor statusColor(ExperimentStatus s)
{
    switch (s) {
    case ExperimentStatus::Kept:
        return QColor(0x1b, 0x7f, 0x3b);
    case ExperimentStatus::Pending:
        return QColor(0xb3, 0x6b, 0x00);
    case ExperimentStatus::Failed:
    case ExperimentStatus::Crashed:
    case ExperimentStatus::Timeout:
        return QColor(0xc0, 0x1c, 0x28);
    default:
        return {};
    }
}

} // namespace

ExperimentModel::ExperimentModel(QObject *parent)
    : RowTableModel<Experiment>(parent)
{ }

void ExperimentModel::rowsArriving(const QVector<Experiment> &rows)
{
    QHash<QString, Start> start;
    for (const Experiment &e : rows) // the newest baseline of a kernel, as the kernel table takes it
        if (e.status == ExperimentStatus::Baseline && e.metrics.correct && Metrics::has(e.metrics.speedup))
            start.insert(e.kernel, { e.id, e.metrics.speedup, e.metrics.latencyUs, e.metrics.refLatencyUs });
    if (start == m_start)
        return;
    m_start = std::move(start);
    // Rows already shown read the new baseline too (a re-baseline is rare; one signal covers it).
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, SpeedupColumn), index(rowCount() - 1, SpeedupColumn));
}

double ExperimentModel::speedupAtBaseline(const Experiment &e) const
{
    const auto it = m_start.constFind(e.kernel);
    if (it == m_start.constEnd() || !(it->latencyUs > 0) || !(e.metrics.latencyUs > 0) || !e.metrics.correct)
        return e.metrics.correct ? e.metrics.speedup : std::nan("");
    return it->speedup * it->latencyUs / e.metrics.latencyUs;
}

int ExperimentModel::rowOfId(int id) const
{
    for (int i = 0; i < rows().size(); ++i)
        if (rows().at(i).id == id)
            return i;
    return -1;
}

// A short dispatch: the per-column roles have their own steps below.
QVariant ExperimentModel::cell(const Experiment &e, int column, int role) const
{
    switch (role) {
    case KernelKeyRole:
        return e.kernel;
    case IdRole:
        return e.id;
    case StatusRole:
        return int(e.status);
    case CommitRole:
        return e.commit;
    case Qt::DisplayRole:
        return displayCell(e, column);
    case SortRole:
        return sortCell(e, column);
    case TotalCostRole:
        if (column == RoofColumn && Metrics::has(e.metrics.pctPeak))
            return 100.0;
        break;
    case Qt::ForegroundRole:
        if (column == StatusColumn)
            return statusForeground(e);
        break;
    case Qt::TextAlignmentRole:
        if (column == IdColumn || column == SpeedupColumn || column == RoofColumn
            || column == ThroughputColumn || column == LatencyColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case Qt::ToolTipRole:
        return toolTipCell(e, column);
    }
    return {};
}

QVariant ExperimentModel::displayCell(const Experiment &e, int column) const
{
    const Metrics &m = e.metrics;
    switch (column) {
    case IdColumn:
        return e.id;
    case KernelColumn:
        return e.kernel;
    case StatusColumn:
        return statusText(e.status);
    case SpeedupColumn:
        // Over PyTorch a 1 % keep reads "0.99×" either way; over the kernel's start it shows.
        return e.status == ExperimentStatus::Baseline
            ? formatSpeedup(m.speedup)
            : formatSpeedupVsStart(speedupAtBaseline(e), m_start.value(e.kernel).speedup);
    case RoofColumn:
        return formatPercentValue(m.pctPeak);
    case ThroughputColumn:
        return throughputText(m);
    case LatencyColumn:
        return formatMicros(m.latencyUs);
    case AgentColumn:
        return e.agent;
    case DescriptionColumn:
        return e.description;
    case CommitColumn:
        return e.commit.left(8);
    case FinishedColumn:
        return e.finished.isValid() ? e.finished.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                                    : QString();
    }
    return {};
}

QVariant ExperimentModel::sortCell(const Experiment &e, int column) const
{
    const Metrics &m = e.metrics;
    switch (column) {
    case IdColumn:
        return e.id;
    case KernelColumn:
        return e.kernel;
    case StatusColumn:
        return int(e.status);
    case SpeedupColumn:
        return raw(speedupAtBaseline(e));
    case RoofColumn:
        return raw(m.pctPeak);
    case ThroughputColumn:
        return raw(m.bound == QLatin1String("memory") ? m.gbps : m.tflops);
    case LatencyColumn:
        return raw(m.latencyUs);
    case AgentColumn:
        return e.agent;
    case DescriptionColumn:
        return e.description;
    case CommitColumn:
        return e.commit;
    case FinishedColumn:
        return e.finished;
    }
    return {};
}

QVariant ExperimentModel::statusForeground(const Experiment &e) const
{
    // Readable on the tables' base in a light and a dark palette (OutcomeColors).
    const QColor c = statusColor(e.status);
    return c.isValid()
        ? QVariant(OutcomeColors::readableOn(c, QGuiApplication::palette().color(QPalette::Base)))
        : QVariant();
}

QVariant ExperimentModel::toolTipCell(const Experiment &e, int column) const
{
    const Metrics &m = e.metrics;
    switch (column) {
    case StatusColumn: {
        QString tip = e.failure.isEmpty() ? statusText(e.status)
                                          : QStringLiteral("%1: %2").arg(statusText(e.status), e.failure);
        if (!m.sandbox.isEmpty())
            tip += tr("\njudged in: %1").arg(m.sandbox);
        // Which judge (#43): the hash of its sources and how it isolated the kernel.
        if (!m.judge.isEmpty())
            tip += tr("\njudge %1, %2").arg(m.judge, m.isolation);
        if (!m.precision.isEmpty())
            tip += tr("\nprecision: %1").arg(m.precision);
        return tip;
    }
    case RoofColumn:
        // Against what the device measurably does, the spec sheet's beside it (docs/numbers.md).
        if (!Metrics::has(m.pctPeak))
            return QVariant();
        return m.roof.isEmpty() || m.roof == QLatin1String("spec")
            ? tr("%1 of the spec sheet's %2 roof (the device's roofs were not measured)")
                  .arg(formatPercentValue(m.pctPeak), m.bound)
            : tr("%1 of the %2 roof the device measurably reaches (%3); %4 of the spec sheet's")
                  .arg(formatPercentValue(m.pctPeak), m.bound, m.roof,
                      Metrics::has(m.pctPeakSpec) ? formatPercentValue(m.pctPeakSpec) : tr("none"));
    case DescriptionColumn:
        // What was tried and, for an attempt not kept, the verdict's reason.
        return e.failure.isEmpty()
            ? e.description
            : QStringLiteral("%1\n%2: %3").arg(e.description, statusText(e.status), e.failure);
    case CommitColumn:
        return tr("commit %1\nparent %2").arg(e.commit, e.parent);
    case SpeedupColumn:
        return speedupTip(e);
    case ThroughputColumn:
        return tr("%1, %2, %3-bound")
            .arg(formatRate(m.tflops, tr("TFLOP/s")), formatRate(m.gbps, tr("GB/s")),
                m.bound.isEmpty() ? QStringLiteral("?") : m.bound);
    case AgentColumn: {
        QString tip = tr("proposed in %1 s, benchmarked in %2 s")
                          .arg(e.agentSeconds, 0, 'f', 1)
                          .arg(e.benchSeconds, 0, 'f', 1);
        if (e.tokensIn > 0 || e.tokensOut > 0)
            tip += tr("\n%L1 tokens in, %L2 out").arg(e.tokensIn).arg(e.tokensOut);
        if (e.cost > 0)
            tip += QStringLiteral(", $%1").arg(e.cost, 0, 'f', 4);
        return tip;
    }
    }
    return {};
}

QString ExperimentModel::speedupTip(const Experiment &e) const
{
    const Metrics &m = e.metrics;
    if (!m.correct || !Metrics::has(m.latencyUs))
        return tr("not measured");
    const auto it = m_start.constFind(e.kernel);
    QStringList lines;
    if (it != m_start.constEnd() && it->latencyUs > 0) {
        lines << tr("%1 = PyTorch as timed with the baseline (#%2: %3 × %4) ÷ this latency %5")
                     .arg(formatSpeedup(speedupAtBaseline(e)))
                     .arg(it->id)
                     .arg(formatSpeedup(it->speedup), formatMicros(it->latencyUs), formatMicros(m.latencyUs));
        if (e.status != ExperimentStatus::Baseline)
            lines << tr("vs start: baseline latency %1 ÷ this latency %2 − 1, what the keep rule compares")
                         .arg(formatMicros(it->latencyUs), formatMicros(m.latencyUs));
    }
    if (Metrics::has(m.speedup))
        lines << tr("paired with this experiment: %1 over PyTorch re-timed at %2, noise %3")
                     .arg(formatSpeedup(m.speedup), formatMicros(m.refLatencyUs),
                         formatPercentValue(m.noisePct));
    // The best PyTorch (#43): torch.compile of the same reference, timed in the same bench.
    if (Metrics::has(m.compileSpeedup))
        lines << tr("over torch.compile (%1): %2, compiled reference %3")
                     .arg(m.compileNote, formatSpeedup(m.compileSpeedup), formatMicros(m.compileLatencyUs));
    else if (!m.compileNote.isEmpty())
        lines << tr("torch.compile: %1").arg(m.compileNote);
    return lines.join(QLatin1Char('\n'));
}

QVariant ExperimentModel::header(int column, int role) const
{
    if (role == Qt::DisplayRole) {
        switch (column) {
        case IdColumn:
            return QStringLiteral("#");
        case KernelColumn:
            return tr("Kernel");
        case StatusColumn:
            return tr("Status");
        case SpeedupColumn:
            return tr("Speedup");
        case RoofColumn:
            return tr("% of roof");
        case ThroughputColumn:
            return tr("Throughput");
        case LatencyColumn:
            return tr("Latency");
        case AgentColumn:
            return tr("Agent");
        case DescriptionColumn:
            return tr("Description");
        case CommitColumn:
            return tr("Commit");
        case FinishedColumn:
            return tr("Finished");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (column) {
        case IdColumn:
            return tr("Experiment number, run-wide");
        case StatusColumn:
            return QStringLiteral(
                "keep, revert, fail, crash, timeout, pending (waits for review), reject, baseline");
        case SpeedupColumn:
            return tr("Over PyTorch as timed with the kernel's baseline (baseline speedup × baseline "
                      "latency ÷ this latency), and the kernel's own gain since its baseline (baseline "
                      "latency ÷ this latency): both on the latency the keep rule compares");
        case RoofColumn:
            return tr("Percent of the roof that bounds this kernel on the device");
        case ThroughputColumn:
            return tr("Achieved rate of the bounding resource");
        case LatencyColumn:
            return tr("Median latency per call");
        case AgentColumn:
            return tr("Who proposed the change: tune, llm:<model>, command, replay, user");
        case CommitColumn:
            return tr("Git commit of the experiment in the run directory");
        }
    } else if (role == Qt::InitialSortOrderRole) {
        if (column == SpeedupColumn || column == RoofColumn || column == ThroughputColumn)
            return QVariant::fromValue(Qt::DescendingOrder);
        return QVariant::fromValue(Qt::AscendingOrder);
    }
    return {};
}

} // namespace ak
