// autokernel-cli status RUN_DIR [--json]: what a run directory holds, read through the same loader as
// the GUI (no lock, so it works while another process runs the loop).
#include "clicommand.h"

#include "experimentlog.h"
#include "runloader.h"
#include "runlock.h"

#include <nlohmann/json.hpp>

#include <QMap>
#include <QTextStream>

namespace ak::cli {

namespace {

// How many experiments ended each way, and which wait for a review.
struct StatusOutcomeCounts
{
    QMap<QString, int> byStatus;
    QList<int> pending;
};

StatusOutcomeCounts countStatusOutcomes(const RunSnapshot &s)
{
    StatusOutcomeCounts c;
    for (const Experiment &e : s.experiments) {
        c.byStatus[statusName(e.status)] += 1;
        if (e.status == ExperimentStatus::Pending)
            c.pending << e.id;
    }
    return c;
}

// Which judges measured the run's results (a judge changed mid-run shows as two).
nlohmann::json statusJudgesJson(const RunSnapshot &s)
{
    QStringList judges;
    for (const Experiment &e : s.experiments)
        if (!e.metrics.judge.isEmpty() && !judges.contains(e.metrics.judge))
            judges << e.metrics.judge;
    nlohmann::json a = nlohmann::json::array();
    for (const QString &j : judges)
        a.push_back(j.toStdString());
    return a;
}

nlohmann::json statusKernelJson(const RunSnapshot &s, const KernelRecord &k)
{
    nlohmann::json kj = ExperimentLog::kernelRecordToJson(k);
    kj["state"] = kernelStateName(k.state).toStdString();
    kj["pytorch_wins"] = s.pytorchWins(k);
    kj["head"] = k.head.toStdString();
    kj["head_experiment"] = k.headExperiment;
    kj["experiment_count"] = k.experimentCount;
    if (const Experiment *h = s.experiment(k.headExperiment)) {
        kj["head_metrics"] = ExperimentLog::metricsToJson(h->metrics);
        // Over the best PyTorch measured (eager or torch.compile): what pytorch_wins decides on.
        if (Metrics::has(h->metrics.bestTorchSpeedup()))
            kj["best_torch_speedup"] = h->metrics.bestTorchSpeedup();
    }
    // #38 item 5: the latest in-model check of a keep, and the streak the move-on rule reads.
    if (const InModelCheck *c = s.inModel.latest(KernelRecord::keyOf(k.folder))) {
        kj["in_model"] = c->toJson();
        kj["in_model"]["checks"] = s.inModel.count(KernelRecord::keyOf(k.folder));
        kj["in_model"]["misses_in_a_row"] = s.inModel.missesInARow(KernelRecord::keyOf(k.folder));
    }
    return kj;
}

void printStatusJson(const RunSnapshot &s, const StatusOutcomeCounts &counts, qint64 writer)
{
    nlohmann::json o;
    o["run_dir"] = s.runDir.toStdString();
    o["model"] = s.config.model.toStdString();
    o["device"] = s.config.device.name.toStdString();
    // What every pct_peak below is against (docs/numbers.md); absent: the spec sheet's roofs.
    if (s.config.device.measured.known())
        o["measured_roofs"] = s.config.device.measured.toJson();
    o["judges"] = statusJudgesJson(s);
    o["review_mode"] = s.reviewMode;
    o["allow_reduced_precision"] = s.config.allowReducedPrecision;
    o["best_commit"] = s.bestCommit.toStdString();
    o["writer_pid"] = writer;
    o["workers"] = s.config.workerSummary().toStdString();
    if (s.config.workerSlurmJob > 0 && !s.config.workerSlurm.isEmpty())
        o["slurm_job"] = s.config.workerSlurmJob;
    o["experiments"] = s.experiments.size();
    for (auto it = counts.byStatus.cbegin(); it != counts.byStatus.cend(); ++it)
        o["counts"][it.key().toStdString()] = it.value();
    o["pending"] = nlohmann::json(std::vector<int>(counts.pending.cbegin(), counts.pending.cend()));
    o["kernels"] = nlohmann::json::array();
    for (const KernelRecord &k : s.kernels)
        o["kernels"].push_back(statusKernelJson(s, k));
    o["warnings"] = nlohmann::json::array();
    for (const QString &w : s.warnings)
        o["warnings"].push_back(w.toStdString());
    QTextStream(stdout) << QString::fromStdString(o.dump(2)) << '\n';
}

// The run-wide lines above the kernel table, then the table's header.
void printStatusSummary(
    QTextStream &out, const RunSnapshot &s, const StatusOutcomeCounts &counts, qint64 writer)
{
    out << "run      " << s.runDir << '\n'
        << "model    " << s.config.model << '\n'
        << "device   " << (s.config.device.name.isEmpty() ? QStringLiteral("-") : s.config.device.summary())
        << '\n'
        << "roofs    "
        << (s.config.device.measured.known()
                   ? s.config.device.measured.summary()
                   : QStringLiteral("not measured (% of roof against the spec sheet)"))
        << '\n'
        << "writer   " << (writer ? QStringLiteral("pid %1").arg(writer) : QStringLiteral("none")) << '\n'
        << "workers  " << s.config.workerSummary() << '\n'
        << "review   " << (s.reviewMode ? "on" : "off") << '\n'
        << "precision "
        << (s.config.allowReducedPrecision ? "reduced allowed (kept, flagged)"
                                           : "as PyTorch's (16-bit accumulation and TF32 refused)")
        << '\n'
        << "best     " << (s.bestCommit.isEmpty() ? QStringLiteral("-") : s.bestCommit.left(12)) << '\n'
        << "experiments " << s.experiments.size();
    // byStatus is keyed by the file's token (as --json prints it); people read the words.
    for (auto it = counts.byStatus.cbegin(); it != counts.byStatus.cend(); ++it) {
        ExperimentStatus status = ExperimentStatus::Running;
        out << "  " << (parseStatus(it.key(), &status) ? statusText(status) : it.key()) << ' ' << it.value();
    }
    out << "\n\n"
        << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8\n")
               .arg(QStringLiteral("kernel"), -28)
               .arg(QStringLiteral("op"), -17)
               .arg(QStringLiteral("state"), -12)
               .arg(QStringLiteral("tries"), 5)
               .arg(QStringLiteral("head"), 6)
               .arg(QStringLiteral("speedup"), 8)
               .arg(QStringLiteral("compiled"), 8)
               .arg(QStringLiteral("% roof"), 15);
}

// One kernel's table row; h is its head experiment (null: none yet).
void printStatusKernelRow(QTextStream &out, const RunSnapshot &s, const KernelRecord &k, const Experiment *h)
{
    const QString speed = h && Metrics::has(h->metrics.speedup)
        ? QString::number(h->metrics.speedup, 'f', 2) + QLatin1Char('x')
        : QStringLiteral("-");
    // Over torch.compile's reference ("n/a": no torch.compile or not measured; the note says why
    // in --json), and % of the measured roof with the spec sheet's after the slash.
    const QString compiled = h && Metrics::has(h->metrics.compileSpeedup)
        ? QString::number(h->metrics.compileSpeedup, 'f', 2) + QLatin1Char('x')
        : h && !h->metrics.compileNote.isEmpty() ? QStringLiteral("n/a")
                                                 : QStringLiteral("-");
    QString roof = QStringLiteral("-");
    if (h && Metrics::has(h->metrics.pctPeak))
        roof = QString::number(h->metrics.pctPeak, 'f', 1)
            + (Metrics::has(h->metrics.pctPeakSpec) && h->metrics.roof != QLatin1String("spec")
                    ? QStringLiteral(" / %1 spec").arg(h->metrics.pctPeakSpec, 0, 'f', 1)
                    : QString());
    out << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8\n")
               .arg(KernelRecord::keyOf(k.folder), -28)
               .arg(k.opType, -17)
               .arg(s.stateText(k), -12)
               .arg(k.experimentCount, 5)
               .arg(QStringLiteral("#%1").arg(k.headExperiment), 6)
               .arg(speed, 8)
               .arg(compiled, 8)
               .arg(roof, 15);
}

// The indented lines under a kernel's row: its call, why it cannot plug, its in-model check, its precision.
void printStatusKernelNotes(
    QTextStream &out, const RunSnapshot &s, const KernelRecord &k, const Experiment *h)
{
    // The model's call this folder stands for, so a reader knows what "kernel" means here.
    if (!k.contract.isEmpty()) {
        const QString attrs = k.contract.attributesText();
        out << "    " << (k.contract.callableName().isEmpty() ? k.opType : k.contract.callableName())
            << (attrs.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(attrs))
            << (k.contract.covers.isEmpty() ? QString() : QStringLiteral(" · ") + k.contract.coversText())
            << '\n';
    }
    if (k.state == KernelState::Unpluggable)
        out << "    not pluggable: " << k.stateReason << '\n';
    if (const InModelCheck *c = s.inModel.latest(KernelRecord::keyOf(k.folder))) {
        const int misses = s.inModel.missesInARow(KernelRecord::keyOf(k.folder));
        out << "    in model: " << c->summary()
            << (misses > 0 ? QStringLiteral(" · %1 harness win(s) in a row not seen in the model").arg(misses)
                           : QString())
            << '\n';
    }
    // A shortcut the run allowed is said beside the speedup it bought.
    if (h && h->metrics.precision.contains(QLatin1String("allowed")))
        out << "    precision: " << h->metrics.precision << '\n';
}

void printStatusText(const RunSnapshot &s, const StatusOutcomeCounts &counts, qint64 writer)
{
    QTextStream out(stdout);
    printStatusSummary(out, s, counts, writer);
    for (const KernelRecord &k : s.kernels) {
        const Experiment *h = s.experiment(k.headExperiment);
        printStatusKernelRow(out, s, k, h);
        printStatusKernelNotes(out, s, k, h);
    }
    if (!counts.pending.isEmpty()) {
        out << "\npending review:";
        for (int id : counts.pending)
            out << " #" << id;
        out << '\n';
    }
    for (const QString &w : s.warnings)
        out << "warning: " << w << '\n';
}

} // namespace

int runStatus(const QStringList &args)
{
    const bool asJson = args.contains(QStringLiteral("--json"));
    QStringList rest = args;
    rest.removeAll(QStringLiteral("--json"));
    if (rest.contains(QStringLiteral("--help")) || rest.contains(QStringLiteral("-h"))) {
        QTextStream(stdout)
            << "Usage: autokernel-cli status RUN_DIR [--json]\n"
            << "Show the kernels, their state and best experiment, and the counts of outcomes.\n";
        return 0;
    }
    if (rest.size() != 1)
        return printUsageError(QStringLiteral("status: give one run directory"));
    QString error;
    const RunSnapshotPtr s = RunLoader::load(rest.first(), &error);
    if (!s)
        return printUsageError(error);

    const StatusOutcomeCounts counts = countStatusOutcomes(*s);
    const qint64 writer = RunLock::holderPid(s->runDir);
    if (asJson)
        printStatusJson(*s, counts, writer);
    else
        printStatusText(*s, counts, writer);
    return 0;
}

} // namespace ak::cli
