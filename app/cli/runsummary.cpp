// The table `autokernel-cli run` prints when the loop ends: one row per kernel in Amdahl order.
#include "clicommand.h"

#include "loop/orchestrator.h"
#include "runsnapshot.h"

#include <QTextStream>

#include <cmath>

namespace ak::cli {

namespace {

QString num(double v, int decimals, const QString &suffix = QString())
{
    return std::isnan(v) ? QStringLiteral("—") : QString::number(v, 'f', decimals) + suffix;
}

} // namespace

void printRunSummary(const RunSnapshot &run, int maxKernels)
{
    QTextStream out(stdout);
    out << QStringLiteral("\n%1  %2 %3 %4 %5 %6 %7 %8 %9  %10\n")
               .arg(QStringLiteral("kernel").leftJustified(24), QStringLiteral("state").leftJustified(12),
                   QStringLiteral("exps").rightJustified(5), QStringLiteral("kept").rightJustified(5),
                   QStringLiteral("base us").rightJustified(10),
                   QStringLiteral("torch us").rightJustified(10),
                   QStringLiteral("best us").rightJustified(10), QStringLiteral("speedup").rightJustified(8),
                   QStringLiteral("% roof").rightJustified(7), QStringLiteral("note"));
    for (const QString &name : Orchestrator::amdahlOrder(run, maxKernels)) {
        const KernelRecord *k = run.kernel(name);
        const Experiment *base = Orchestrator::baseline(run, name);
        const Experiment *head = run.experiment(k->headExperiment);
        int exps = 0, kept = 0;
        for (const Experiment &e : run.experiments) {
            if (e.kernel != name || e.status == ExperimentStatus::Baseline)
                continue;
            ++exps;
            kept += e.status == ExperimentStatus::Kept ? 1 : 0;
        }
        const double baseUs = base ? base->metrics.latencyUs : std::nan("");
        const double bestUs = head ? head->metrics.latencyUs : std::nan("");
        const double speedup
            = (std::isnan(baseUs) || std::isnan(bestUs) || bestUs <= 0) ? std::nan("") : baseUs / bestUs;
        out << QStringLiteral("%1  %2 %3 %4 %5 %6 %7 %8 %9  %10\n")
                   .arg(name.left(24).leftJustified(24), run.stateText(*k).leftJustified(12),
                       QString::number(exps).rightJustified(5), QString::number(kept).rightJustified(5),
                       num(baseUs, 2).rightJustified(10),
                       num(base ? base->metrics.refLatencyUs : std::nan(""), 2).rightJustified(10),
                       num(bestUs, 2).rightJustified(10),
                       num(speedup, 2, QStringLiteral("x")).rightJustified(8),
                       num(head ? head->metrics.pctPeak : std::nan(""), 1).rightJustified(7),
                       k->stateReason.left(70));
    }
}

} // namespace ak::cli
