#pragma once

#include "experiment.h"
#include "models/rowtablemodel.h"

#include <QHash>

namespace ak {

// The commit list: one row per experiment (one git commit each), in id order. Same role scheme as
// KernelTableModel: DisplayRole formatted, SortRole raw, tooltips per column. The Speedup column also
// shows each result against its kernel's baseline ("0.990× · +1.2 % vs start").
class ExperimentModel : public RowTableModel<Experiment>
{
    Q_OBJECT
public:
    enum Columns {
        IdColumn,
        KernelColumn,
        StatusColumn,
        SpeedupColumn,
        RoofColumn,
        ThroughputColumn,
        LatencyColumn,
        AgentColumn,
        DescriptionColumn,
        CommitColumn,
        FinishedColumn,
        ColumnCount
    };
    Q_ENUM(Columns)

    enum Roles {
        SortRole = Qt::UserRole,
        TotalCostRole,
        KernelKeyRole, // Experiment::kernel
        IdRole, // Experiment::id
        StatusRole, // int(ExperimentStatus)
        CommitRole, // full hex id
    };

    explicit ExperimentModel(QObject *parent = nullptr);

    // Row of the experiment with this id, -1 if absent.
    int rowOfId(int id) const;

protected:
    int columns() const override { return ColumnCount; }
    QVariant cell(const Experiment &e, int column, int role) const override;
    QVariant header(int column, int role) const override;
    QString key(const Experiment &e) const override { return QString::number(e.id); }
    // Every cell is a function of the Experiment and its kernel's baseline speedup; a changed baseline
    // re-signals the Speedup column itself (rowsArriving).
    bool sameRow(const Experiment &a, const Experiment &b) const override { return a == b; }
    void rowsArriving(const QVector<Experiment> &rows) override;

    // The Speedup column's number (#41): over PyTorch as timed with the kernel's baseline, i.e.
    // baseline speedup × baseline latency ÷ this latency. One PyTorch time per kernel, so it orders
    // experiments as the keep rule does (by the kernel's own latency), as the chart plots them.
    // NaN when not measured; a kernel without a measured baseline falls back to the paired speedup.
    double speedupAtBaseline(const Experiment &e) const;
    QString speedupTip(const Experiment &e) const; // what the Speedup cell divides by

private:
    // cell()'s steps: DisplayRole text, SortRole raw numbers, the Status column's colour, the tooltip.
    QVariant displayCell(const Experiment &e, int column) const;
    QVariant sortCell(const Experiment &e, int column) const;
    QVariant statusForeground(const Experiment &e) const;
    QVariant toolTipCell(const Experiment &e, int column) const;

    struct Start
    {
        int id = 0;
        double speedup = std::nan("");
        double latencyUs = std::nan("");
        double refLatencyUs = std::nan("");
        bool operator==(const Start &o) const
        {
            return id == o.id && speedup == o.speedup && latencyUs == o.latencyUs;
        }
    };
    QHash<QString, Start> m_start; // kernel -> its baseline ("vs start")
};

} // namespace ak
