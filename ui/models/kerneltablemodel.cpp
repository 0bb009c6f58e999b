#include "models/kerneltablemodel.h"

#include "jsonfield.h"
#include "numberformat.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QHash>
#include <QRegularExpression>

namespace ak {

KernelTableModel::KernelTableModel(QObject *parent)
    : RowTableModel<KernelRow>(parent)
{ }

QHash<QString, QString> KernelTableModel::whereInModel(const QString &runDir)
{
    QHash<QString, QString> where;
    QFile file(QDir(runDir).filePath(QStringLiteral("profile.json")));
    if (!file.open(QIODevice::ReadOnly))
        return where;
    const QByteArray data = file.readAll();
    const nlohmann::json profile
        = nlohmann::json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    const nlohmann::json *kernels = jsonfield::array(profile, "kernels");
    if (!kernels)
        return where;
    static const QRegularExpression number(QStringLiteral("(^|\\.)\\d+(?=\\.|$)"));
    for (const nlohmann::json &row : *kernels) {
        const QString folder = jsonfield::text(row, "folder");
        const nlohmann::json *sites = jsonfield::array(row, "call_sites");
        if (folder.isEmpty() || !sites)
            continue;
        // Every layer's call of one module is one place: model.layers.0.mlp … layers.31.mlp.
        QStringList places;
        for (const nlohmann::json &site : *sites) {
            QString place = jsonfield::text(site, "module");
            if (place.isEmpty())
                place = jsonfield::text(site, "function");
            if (sites->size() > 1)
                place.replace(number, QStringLiteral("\\1*"));
            if (!place.isEmpty() && !places.contains(place))
                places << place;
        }
        if (places.isEmpty())
            continue;
        where.insert(KernelRecord::keyOf(folder),
            places.size() == 1 ? places.first()
                               : QCoreApplication::translate("ak::KernelTableModel", "%1 (+%2 more)")
                                     .arg(places.first())
                                     .arg(places.size() - 1));
    }
    return where;
}

QString KernelTableModel::readableName(const KernelRow &row)
{
    const KernelRecord &k = row.kernel;
    QStringList parts;
    if (!k.opType.isEmpty())
        parts << k.opType;
    if (!row.where.isEmpty())
        parts << row.where;
    else if (!k.module.isEmpty())
        parts << k.module; // the module class, when the profile has no call sites
    if (parts.isEmpty())
        return k.name;
    if (!k.shapes.isEmpty())
        parts << k.shapes.first();
    return parts.join(QStringLiteral(" \u00b7 "));
}

QVector<KernelRow> KernelTableModel::rowsFrom(const RunSnapshot &snapshot)
{
    QVector<KernelRow> rows;
    QHash<QString, int> byKey;
    for (const KernelRecord &k : snapshot.kernels) {
        KernelRow row;
        row.kernel = k;
        row.key = k.key();
        row.pytorchWins = snapshot.pytorchWins(k);
        byKey.insert(row.key, int(rows.size()));
        rows.append(row);
    }
    for (const Experiment &e : snapshot.experiments) {
        const auto it = byKey.constFind(e.kernel);
        if (it == byKey.constEnd())
            continue;
        KernelRow &row = rows[*it];
        if (e.status != ExperimentStatus::Baseline)
            ++row.experiments;
        if (e.status == ExperimentStatus::Pending)
            ++row.pending;
        if (e.status == ExperimentStatus::Baseline && e.metrics.correct) {
            row.baselineUs = e.metrics.latencyUs;
            row.torchUs = e.metrics.refLatencyUs;
            row.compileUs = e.metrics.compileLatencyUs;
            row.compileNote = e.metrics.compileNote;
            row.baselineSpeedup = e.metrics.speedup;
        }
        if (e.status != ExperimentStatus::Kept || !e.metrics.correct)
            continue;
        ++row.kept;
        const Metrics &m = e.metrics;
        if (Metrics::has(m.speedup) && !(m.speedup <= row.bestSpeedup))
            row.bestSpeedup = m.speedup;
        if (Metrics::has(m.pctPeak) && !(m.pctPeak <= row.bestPctPeak)) {
            row.bestPctPeak = m.pctPeak;
            row.bestPctPeakSpec = m.pctPeakSpec;
            row.roof = m.roof;
        }
        if (Metrics::has(m.compileSpeedup) && !(m.compileSpeedup <= row.bestCompileSpeedup))
            row.bestCompileSpeedup = m.compileSpeedup;
    }
    // Best is the head, the experiment Compare Baseline with Best diffs, over PyTorch as timed with
    // the baseline (the commit list's and the chart's number): the highest paired speedup was at
    // times an older keep, PyTorch re-timed each experiment (#41).
    for (KernelRow &row : rows) {
        const KernelRecord *k = snapshot.kernel(row.key);
        const Experiment *head = k ? snapshot.experiment(k->headExperiment) : nullptr;
        if (head && head->status == ExperimentStatus::Kept && head->metrics.correct && row.baselineUs > 0
            && head->metrics.latencyUs > 0 && row.baselineSpeedup > 0)
            row.bestSpeedup = row.baselineSpeedup * row.baselineUs / head->metrics.latencyUs;
    }
    if (snapshot.verification) {
        for (KernelRow &row : rows) {
            if (const KernelVerification *v = snapshot.verification->kernel(row.key)) {
                row.inModel = *v;
                row.modelNote = snapshot.verification->parityNote;
            }
        }
    }
    for (KernelRow &row : rows) {
        const InModelCheck *c = snapshot.inModel.latest(row.key);
        if (!c)
            continue;
        row.live = *c;
        row.liveIsNewer = !row.inModel || !snapshot.verification->when.isValid() || !c->when.isValid()
            || c->when > snapshot.verification->when;
        row.liveMisses = snapshot.inModel.missesInARow(row.key);
        row.liveMissLimit = snapshot.config.moveOn.maxInModelMisses;
    }
    return rows;
}

// Parity comes before plugging: a model that raised with the kernel in it counts as not plugged,
// but what the user must know is that it broke the model.
QString inModelText(const KernelVerification &v)
{
    if (v.inFinalSet)
        return formatSignedPercent(v.effectPct)
            + QCoreApplication::translate("ak::KernelTableModel", " \u2713");
    if (v.parityChecked && !v.parityOk)
        return QCoreApplication::translate("ak::KernelTableModel", "parity \u2717");
    if (!v.plugged)
        return QCoreApplication::translate("ak::KernelTableModel", "not plugged");
    return std::isnan(v.effectPct)
        ? QCoreApplication::translate("ak::KernelTableModel", "left out")
        : formatSignedPercent(v.effectPct) + QCoreApplication::translate("ak::KernelTableModel", " left out");
}

QString inModelText(const InModelCheck &c)
{
    const auto tr
        = [](const char *text) { return QCoreApplication::translate("ak::KernelTableModel", text); };
    if (std::isnan(c.effectPct))
        return c.plugged && !c.parityOk ? tr("parity \u2717") : tr("not plugged");
    return formatSignedPercent(c.effectPct) + (c.positive ? tr(" run") : tr(" run \u2717"));
}

namespace {

// Sorting puts "not measured" below every measured value in either direction's natural reading.
QVariant sortable(double v)
{
    return std::isnan(v) ? QVariant(-1.0) : QVariant(v);
}

QString headroomText(double x)
{
    return x > 0 ? formatRatio(x) : notMeasured();
}

// What the folder stands for in the model (docs/contracts.md), for the Op column's tooltip.
QString contractTip(const KernelRecord &k)
{
    const auto tr
        = [](const char *text) { return QCoreApplication::translate("ak::KernelTableModel", text); };
    if (k.contract.isEmpty())
        return tr("%1 with the harness's default contract (a run made before contracts were recorded)")
            .arg(k.opType);
    const QString attrs = k.contract.attributesText();
    return tr("The model's own call: %1%2%3")
        .arg(k.contract.callable.isEmpty() ? k.opType : k.contract.callable,
            attrs.isEmpty() ? QString() : QStringLiteral("\n") + attrs,
            k.contract.covers.isEmpty() ? QString() : QStringLiteral("\n") + k.contract.coversText());
}

// % of roof is against what the device measurably does; the spec sheet's beside it (docs/numbers.md).
QString roofTip(const KernelRow &row)
{
    if (row.roof.isEmpty() || row.roof == QLatin1String("spec"))
        return KernelTableModel::tr("%1 of the spec sheet's roof (the device's roofs were not measured)")
            .arg(formatPercentValue(row.bestPctPeak));
    return KernelTableModel::tr("%1 of the roof the device measurably reaches (%2); %3 of the spec sheet's")
        .arg(formatPercentValue(row.bestPctPeak), row.roof,
            Metrics::has(row.bestPctPeakSpec) ? formatPercentValue(row.bestPctPeakSpec)
                                              : KernelTableModel::tr("none"));
}

QString liveTip(const KernelRow &row)
{
    const auto tr
        = [](const char *text) { return QCoreApplication::translate("ak::KernelTableModel", text); };
    const InModelCheck &c = *row.live;
    QStringList lines;
    lines << tr("Checked in the model during the run (the kept kernel alone vs the model as written, %1):")
                 .arg(c.when.toLocalTime().toString(QStringLiteral("HH:mm:ss")))
          << c.summary();
    if (!c.harnessWin)
        lines << tr("That keep did not beat PyTorch in the harness: it does not count for the move-on rule");
    if (row.liveMisses > 0)
        lines << (row.liveMissLimit > 0
                ? tr("%1 kept harness win(s) in a row not seen in the model; the loop moves on at %2")
                      .arg(row.liveMisses)
                      .arg(row.liveMissLimit)
                : tr("%1 kept harness win(s) in a row not seen in the model (the rule is off)")
                      .arg(row.liveMisses));
    lines << tr("Model \u25b8 Verify measures the final set at the end");
    return lines.join(QLatin1Char('\n'));
}

QString inModelTip(const KernelRow &row)
{
    if (row.live && row.liveIsNewer)
        return liveTip(row);
    if (!row.inModel)
        return QCoreApplication::translate("ak::KernelTableModel",
            "Not verified: Model ▸ Verify measures the kept kernels inside the model");
    const KernelVerification &v = *row.inModel;
    QStringList lines;
    if (v.inFinalSet)
        lines << QCoreApplication::translate("ak::KernelTableModel",
            "In the final set: saves %1 of the model's time (measured by leaving it out)")
                     .arg(formatPercentValue(v.effectPct));
    else
        lines << (v.whyNot.isEmpty() ? (row.modelNote.isEmpty()
                          ? QCoreApplication::translate("ak::KernelTableModel", "Left out of the final set")
                          : row.modelNote)
                                     : v.whyNot);
    if (v.parityChecked)
        lines << QCoreApplication::translate(
            "ak::KernelTableModel", "Parity %1: %2 tolerances from the truth (eager %3)%4")
                     .arg(v.parityOk ? QStringLiteral("ok") : QStringLiteral("failed"),
                         std::isnan(v.parityError) ? notMeasured() : QString::number(v.parityError, 'g', 3),
                         std::isnan(v.eagerError) ? notMeasured() : QString::number(v.eagerError, 'g', 3),
                         v.reused ? QCoreApplication::translate(
                             "ak::KernelTableModel", ", from the previous verification")
                                  : QString());
    if (!v.sites.isEmpty())
        lines << QCoreApplication::translate("ak::KernelTableModel", "Call sites: %1")
                     .arg(v.sites.join(QStringLiteral(", ")));
    return lines.join(QLatin1Char('\n'));
}

} // namespace

// A short dispatch: each role has its own step below, so no one function holds every column twice.
QVariant KernelTableModel::cell(const KernelRow &row, int column, int role) const
{
    if (role == KeyRole)
        return row.key;
    if (role == StateRole)
        return int(row.kernel.state);
    if (role == Qt::DisplayRole || role == SortRole) {
        if (QVariant same = identityCell(row, column, role); same.isValid())
            return same;
    }
    if (role == Qt::DisplayRole)
        return displayCell(row, column);
    if (role == SortRole)
        return sortCell(row, column);
    if (role == TotalCostRole)
        return totalCostCell(row, column);
    if (role == Qt::TextAlignmentRole)
        return alignmentCell(column);
    if (role == Qt::ToolTipRole)
        return toolTipCell(row, column);
    return {};
}

// Text and identity columns show and sort by the same value; invalid for the measured columns.
QVariant KernelTableModel::identityCell(const KernelRow &row, int column, int role) const
{
    const KernelRecord &k = row.kernel;
    switch (column) {
    case RankColumn:
        return k.rank;
    case KernelColumn:
        // Shown: what a person recognises; sorted by the symbol, the model's raw value.
        return role == SortRole ? QVariant(k.name) : QVariant(readableName(row));
    case OpColumn:
        return k.opType;
    case ShapesColumn:
        return k.shapes.join(QStringLiteral(", "));
    case DtypeColumn:
        return k.dtype;
    case CallsColumn:
        return k.calls;
    default:
        return {};
    }
}

QVariant KernelTableModel::displayCell(const KernelRow &row, int column) const
{
    const KernelRecord &k = row.kernel;
    switch (column) {
    case TimeColumn:
        return formatMicros(k.timeUs);
    case ShareColumn:
        return formatPercent(k.share);
    case HeadroomColumn:
        return headroomText(k.maxSpeedup);
    case ModelGainColumn:
        return headroomText(k.modelSpeedupAt90);
    case InModelColumn:
        if (row.live && row.liveIsNewer)
            return inModelText(*row.live);
        return row.inModel ? inModelText(*row.inModel) : QString();
    case BaselineColumn:
        if (!Metrics::has(row.baselineUs))
            return notMeasured();
        // Both PyTorch baselines (#43): eager and torch.compile, timed by the judge in the same
        // bench; "n/a" when the judge said why it has none, nothing in runs from before.
        if (!Metrics::has(row.torchUs))
            return formatMicros(row.baselineUs);
        if (!Metrics::has(row.compileUs) && row.compileNote.isEmpty())
            return tr("%1 · PyTorch %2").arg(formatMicros(row.baselineUs), formatMicros(row.torchUs));
        return tr("%1 · PyTorch %2 · compiled %3")
            .arg(formatMicros(row.baselineUs), formatMicros(row.torchUs),
                Metrics::has(row.compileUs) ? formatMicros(row.compileUs) : tr("n/a"));
    case BestSpeedupColumn:
        // Against PyTorch a 1 % keep reads "0.99×" either way; against the start it shows.
        return formatSpeedupVsStart(row.bestSpeedup, row.baselineSpeedup);
    case RoofColumn:
        return formatPercentValue(row.bestPctPeak);
    case ExperimentsColumn:
        if (row.experiments == 0)
            return tr("none yet");
        return row.pending > 0
            ? tr("%1 (%2 kept, %3 to review)").arg(row.experiments).arg(row.kept).arg(row.pending)
            : tr("%1 (%2 kept)").arg(row.experiments).arg(row.kept);
    case StateColumn:
        return kernelStateText(k.state, row.pytorchWins);
    }
    return {};
}

QVariant KernelTableModel::sortCell(const KernelRow &row, int column) const
{
    const KernelRecord &k = row.kernel;
    switch (column) {
    case TimeColumn:
        return k.timeUs;
    case ShareColumn:
        return k.share;
    case HeadroomColumn:
        return k.maxSpeedup;
    case ModelGainColumn:
        return k.modelSpeedupAt90;
    case InModelColumn:
        if (row.live && row.liveIsNewer)
            return row.live->effectPct;
        return row.inModel ? row.inModel->effectPct : std::nan(""); // the proxy puts NaN last
    case BaselineColumn:
        return sortable(row.baselineUs);
    case BestSpeedupColumn:
        return sortable(row.bestSpeedup);
    case RoofColumn:
        return sortable(row.bestPctPeak);
    case ExperimentsColumn:
        return row.experiments;
    case StateColumn:
        return int(k.state);
    }
    return {};
}

QVariant KernelTableModel::totalCostCell(const KernelRow &row, int column) const
{
    if (column == ShareColumn)
        return 1.0;
    if (column == RoofColumn && Metrics::has(row.bestPctPeak))
        return 100.0;
    return {};
}

QVariant KernelTableModel::alignmentCell(int column) const
{
    switch (column) {
    case RankColumn:
    case TimeColumn:
    case ShareColumn:
    case CallsColumn:
    case HeadroomColumn:
    case ModelGainColumn:
    case InModelColumn:
    case BaselineColumn:
    case BestSpeedupColumn:
    case RoofColumn:
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant KernelTableModel::toolTipCell(const KernelRow &row, int column) const
{
    const KernelRecord &k = row.kernel;
    switch (column) {
    case KernelColumn:
        return tr("%1\n%2\nlaunched by %3\nfolder %4")
            .arg(readableName(row), k.name, k.atenOp.isEmpty() ? QStringLiteral("?") : k.atenOp, k.folder);
    case ShapesColumn:
        return k.shapes.join(QLatin1Char('\n'));
    case TimeColumn:
        return tr("%1 per iteration over %2 calls (%3 per call)")
            .arg(formatMicros(k.timeUs))
            .arg(k.calls)
            .arg(formatMicros(k.calls > 0 ? k.timeUs / k.calls : k.timeUs));
    case HeadroomColumn:
        return k.maxSpeedup > 0 ? tr("Roofline floor %1 per call").arg(formatMicros(k.floorUs))
                                : tr("No roofline: the device's peak is unknown");
    case InModelColumn:
        return inModelTip(row);
    case BaselineColumn:
        return row.compileNote.isEmpty()
            ? QVariant()
            : tr("torch.compile of PyTorch's reference: %1").arg(row.compileNote);
    case RoofColumn:
        if (row.kept == 0)
            return tr("No kept experiment for this kernel yet");
        return roofTip(row);
    case BestSpeedupColumn: {
        if (row.kept == 0)
            return tr("No kept experiment for this kernel yet");
        QString tip = tr("The head (newest keep): baseline speedup %1 × baseline latency %2 ÷ the "
                         "head's latency; vs start: the kernel's own gain since its baseline")
                          .arg(formatSpeedup(row.baselineSpeedup), formatMicros(row.baselineUs));
        if (Metrics::has(row.bestCompileSpeedup))
            tip += tr("\nBest over torch.compile (max-autotune): %1")
                       .arg(formatSpeedup(row.bestCompileSpeedup));
        return tip;
    }
    case OpColumn:
        return contractTip(k);
    case StateColumn:
        if (k.state == KernelState::Unpluggable)
            return tr("Not pluggable into the model, so the loop gives it no budget: %1").arg(k.stateReason);
        return row.pytorchWins
            ? tr("The loop is done with this kernel and its best is still slower than PyTorch's "
                 "own: Verify does not offer it for the model")
            : QVariant();
    }
    return {};
}

QVariant KernelTableModel::header(int column, int role) const
{
    if (role == Qt::DisplayRole) {
        switch (column) {
        case RankColumn:
            return QStringLiteral("#");
        case KernelColumn:
            return tr("Kernel");
        case OpColumn:
            return tr("Op");
        case ShapesColumn:
            return tr("Shapes");
        case DtypeColumn:
            return tr("Dtype");
        case TimeColumn:
            return tr("Time");
        case ShareColumn:
            return tr("Share");
        case CallsColumn:
            return tr("Calls");
        case HeadroomColumn:
            return tr("Headroom");
        case ModelGainColumn:
            return tr("Model @90%");
        case InModelColumn:
            return tr("In model");
        case BaselineColumn:
            return tr("Baseline");
        case BestSpeedupColumn:
            return tr("Best");
        case RoofColumn:
            return tr("% of roof");
        case ExperimentsColumn:
            return tr("Experiments");
        case StateColumn:
            return tr("State");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (column) {
        case RankColumn:
            return tr("Rank by share of the model's device time (1 = largest)");
        case KernelColumn:
            return tr("The op, where in the model it runs (its call sites' module path, or the function) "
                      "and its input shape; each kernel's symbol as profiled is in its tooltip");
        case OpColumn:
            return tr("Operation type the harness knows how to check and benchmark");
        case ShapesColumn:
            return tr("Input shapes as profiled");
        case DtypeColumn:
            return tr("Element type; the roof is the device's peak for it");
        case TimeColumn:
            return tr("Device time per model iteration, all calls together");
        case ShareColumn:
            return tr("Fraction of the model's device time spent in this kernel");
        case CallsColumn:
            return tr("Launches per model iteration");
        case HeadroomColumn:
            return QStringLiteral(
                "Largest speedup the roofline allows: profiled time ÷ (calls × roofline floor)");
        case ModelGainColumn:
            return tr("Whole-model speedup (Amdahl) if this kernel reached 90% of its roof");
        case InModelColumn:
            return QStringLiteral(
                "Measured inside the model: by Verify, % of the model's time the kernel saves "
                "(leave one out; ✓ in the final set, left out, not plugged, or parity ✗); during the "
                "run, by the check after a keep (the kernel alone vs eager; \"run\", ✗: no gain)");
        case BaselineColumn:
            return tr("The starter's time at its baseline bench, and PyTorch's own in the same bench");
        case BestSpeedupColumn:
            return tr("Best kept experiment, speedup over the PyTorch reference, and its gain over the "
                      "kernel's baseline (vs start)");
        case RoofColumn:
            return QStringLiteral(
                "Best kept experiment, percent of the roof that bounds this kernel (compute or memory)");
        case ExperimentsColumn:
            return tr("Experiments run on this kernel (baseline not counted)");
        case StateColumn:
            return tr("Steering state: waiting, active, pinned, skipped or done; pytorch wins: done and "
                      "still slower than PyTorch's own");
        }
    } else if (role == Qt::InitialSortOrderRole) {
        // Costs and gains read best largest-first; names and rank smallest-first.
        switch (column) {
        case TimeColumn:
        case ShareColumn:
        case CallsColumn:
        case HeadroomColumn:
        case ModelGainColumn:
        case InModelColumn:
        case BestSpeedupColumn:
        case RoofColumn:
        case ExperimentsColumn:
            return QVariant::fromValue(Qt::DescendingOrder);
        default:
            return QVariant::fromValue(Qt::AscendingOrder);
        }
    }
    return {};
}

} // namespace ak
