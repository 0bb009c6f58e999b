#pragma once

#include "experiment.h"
#include "kernelrecord.h"

#include <QByteArray>
#include <QString>
#include <QVector>

namespace ak {

// The AutoKernel-compatible export of finished experiments (results.tsv). Derived from the log and
// rewritten on repair, so it is never the only copy of anything.
class ResultsTsv
{
public:
    static QString fileName() { return QStringLiteral("results.tsv"); }
    static QByteArray header();
    // One row: experiment, tag (kernel folder), kernel_type, throughput_tflops, latency_us, pct_peak,
    // speedup_vs_pytorch, correctness (PASS/FAIL), peak_vram_mb, description.
    static QByteArray row(const Experiment &e, const QString &kernelType);
    // Rows for exported experiments, in id order.
    static QByteArray render(const QVector<Experiment> &experiments, const QVector<KernelRecord> &kernels);
    // Decided and measured: not running, not waiting for review, and with a finish time (a baseline
    // gets one when its metrics are recorded).
    static bool isExported(const Experiment &e)
    {
        return e.status != ExperimentStatus::Running && e.status != ExperimentStatus::Pending
            && e.finished.isValid();
    }
};

} // namespace ak
