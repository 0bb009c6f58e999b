#pragma once

#include <QHash>

#include "kernelrecord.h"
#include "models/rowtablemodel.h"
#include "runsnapshot.h"

#include <cmath>
#include <optional>

namespace ak {

// One row of the ranked kernel table: the profiled kernel plus what the run's experiments achieved.
struct KernelRow
{
    KernelRecord kernel;
    QString key; // folder name, same as Experiment::kernel
    int experiments = 0;
    int kept = 0;
    int pending = 0;
    double bestSpeedup = std::nan(""); // best kept experiment vs the PyTorch reference
    double bestPctPeak = std::nan(""); // best kept experiment, % of the kernel's roof
    double baselineUs = std::nan(""); // the starter's latency at its baseline experiment
    double torchUs = std::nan(""); // PyTorch's own at the same bench
    double compileUs = std::nan(""); // torch.compile(max-autotune) of the same reference, same bench
    QString compileNote; // why compileUs is missing (no torch.compile, ...), or how it was compiled
    double bestPctPeakSpec = std::nan(""); // the best's % of the spec sheet's roof
    double bestCompileSpeedup = std::nan(""); // the best's speedup over torch.compile
    QString roof; // which roofs bestPctPeak is against: "measured", "spec", ...
    double baselineSpeedup = std::nan(""); // the starter's at its baseline: what "vs start" is against
    bool pytorchWins = false; // RunSnapshot::pytorchWins
    std::optional<KernelVerification> inModel; // what verification.json says of it; none: not verified
    QString modelNote; // the verification's note on the final set (it failed parity together)
    // The latest in-model check of a keep during the run (inmodel.json, #38 item 5); shown instead of
    // the verification when it is newer (or there is none), so the column is live while the loop runs.
    std::optional<InModelCheck> live;
    bool liveIsNewer = false;
    int liveMisses = 0; // harness wins in a row the model did not show (the move-on rule's count)
    int liveMissLimit = 0; // the run's max_in_model_misses (0: the rule is off)
    // Where in the model it runs, from profile.json's call sites: "model.layers.*.input_layernorm"
    // (numbered layers folded), else the function it ran in; empty when the profile does not say.
    QString where;
};

// What verify found for a kernel, in a few words: "+4.2 % ✓" (in the final set), "−1.3 % left out",
// "not plugged", "parity ✗". The table's In model column and the model view use it.
QString inModelText(const KernelVerification &verification);
// The same for a check during the run: "+3.1 % run", "+0.2 % run ✗" (no gain beyond the noise),
// "not plugged", "parity ✗".
QString inModelText(const InModelCheck &check);

// Kernels of a run in rank order: DisplayRole formatted, SortRole raw numbers, a bar through
// TotalCostRole for the share and roof columns (drawn by CostDelegate), a tooltip per column.
class KernelTableModel : public RowTableModel<KernelRow>
{
    Q_OBJECT
public:
    // Experiments and State follow the kernel's name: they change while a run is watched, and as the
    // last of 16 columns they were off-screen in a 1600 px window.
    enum Columns {
        RankColumn,
        KernelColumn,
        ExperimentsColumn,
        StateColumn,
        OpColumn,
        ShapesColumn,
        DtypeColumn,
        TimeColumn,
        ShareColumn,
        CallsColumn,
        HeadroomColumn,
        ModelGainColumn,
        InModelColumn,
        BaselineColumn,
        BestSpeedupColumn,
        RoofColumn,
        ColumnCount
    };
    Q_ENUM(Columns)

    enum Roles {
        SortRole = Qt::UserRole, // raw value for sorting
        TotalCostRole, // the value that fills a whole bar (CostDelegate); absent = no bar
        KeyRole, // kernel key
        StateRole, // int(KernelState)
    };

    explicit KernelTableModel(QObject *parent = nullptr);

    static QVector<KernelRow> rowsFrom(const RunSnapshot &snapshot);
    // Each kernel's (by key) place in the model from `runDir`/profile.json (KernelRow::where); empty
    // for a run without one. Read once per opened run: a reload does not change the profile.
    static QHash<QString, QString> whereInModel(const QString &runDir);
    // The Kernel column: op · where · shape ("rmsnorm · model.layers.*.input_layernorm · [4096, 2048]");
    // the symbol when nothing else is known.
    static QString readableName(const KernelRow &row);

protected:
    int columns() const override { return ColumnCount; }
    QVariant cell(const KernelRow &row, int column, int role) const override;
    QVariant header(int column, int role) const override;
    QString key(const KernelRow &row) const override { return row.key; }

private:
    // cell()'s steps, one per role: DisplayRole text, SortRole raw numbers, the bar's total, the
    // alignment and the tooltip; identityCell answers the columns that show and sort by one value.
    QVariant identityCell(const KernelRow &row, int column, int role) const;
    QVariant displayCell(const KernelRow &row, int column) const;
    QVariant sortCell(const KernelRow &row, int column) const;
    QVariant totalCostCell(const KernelRow &row, int column) const;
    QVariant alignmentCell(int column) const;
    QVariant toolTipCell(const KernelRow &row, int column) const;
};

} // namespace ak
