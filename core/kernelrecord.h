#pragma once

#include "kernelcontract.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

namespace ak {

// The steering state of one optimisation target.
// Unpluggable: the folder cannot be plugged into the model (its contract says why); it gets no budget.
enum class KernelState { Waiting, Active, Pinned, Skipped, Done, Unpluggable };

// One profiled kernel and the Amdahl numbers derived from it (profile.json + run state).
struct KernelRecord
{
    int rank = 0; // 1 = largest share of time
    QString folder; // "kernels/01-matmul"
    QString name; // kernel symbol as profiled
    QString opType; // "matmul", "softmax", ..., "unknown"
    QString atenOp; // launching aten op, e.g. "aten::addmm"
    QStringList shapes; // input shapes as text, e.g. "[4096, 2048]"
    QString dtype; // "bf16", "fp32", ...
    double timeUs = 0; // total device time across profiled iterations / iterations
    double share = 0; // fraction of total device time, 0..1
    int calls = 0; // per iteration
    double flops = 0; // per call
    double bytes = 0; // per call, minimum traffic
    double floorUs = 0; // roofline floor per call on the device
    double maxSpeedup = 0; // timeUs / (calls * floorUs)
    double modelSpeedupAt90 = 0; // whole-model speedup if this kernel reached 90% of its roof
    KernelState state = KernelState::Waiting;
    // Profiler detail (profile.json), for tooltips and the extract op:
    QString classifiedBy; // what decided opType: "aten::addmm", "module RMSNorm", "kernel name"
    QString module; // innermost nn.Module class the kernel ran in
    QString bound; // "memory" | "compute" | "" (roof unknown)
    KernelContract contract; // the model's call this folder stands for (empty in runs made before #38)
    // Run state, filled by the run loader from experiments.jsonl:
    QString head; // commit at the tip of the kernel's branch (its current best)
    int headExperiment = 0; // experiment whose commit is the head (the baseline at first)
    int experimentCount = 0; // experiments started on this kernel, baseline excluded
    QString stateReason; // why it was pinned / skipped / done, if given

    // The kernel's id in the run: its folder's name ("01-matmul"), what the log, refs, steering and
    // every table key it by; the symbol name for a record not yet in a run.
    QString key() const;
    // "kernels/01-matmul" or "01-matmul" -> "01-matmul".
    static QString keyOf(const QString &folderOrName);
};

QString kernelStateName(KernelState s);
// The state as people read it: kernelStateName, or "pytorch wins" for a done kernel still slower
// than PyTorch's own (RunSnapshot::pytorchWins decides).
QString kernelStateText(KernelState s, bool pytorchWins);

} // namespace ak

Q_DECLARE_METATYPE(ak::KernelRecord)
