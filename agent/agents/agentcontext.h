#pragma once

#include "agents/tunememory.h"
#include "deviceinfo.h"
#include "experiment.h"
#include "kernelrecord.h"
#include "kernelstaticinfo.h"

#include <QHash>
#include <QString>
#include <QVector>

namespace ak {

// Another kernel of the run with the same op type, as the loop found it: its head kernel.py and how
// it compares with PyTorch (the tune agent tries its configuration: what worked there may work here).
struct PeerKernel
{
    QString kernel; // "03-matmul"
    QString kernelPy;
    double speedup = 0; // its head's speedup over PyTorch
};

// Everything an agent may look at to propose the next kernel.py of one kernel. A value type built by
// the loop for each experiment (it crosses into the agent by copy; agents never touch the run store).
struct AgentContext
{
    QString kernelName; // kernel folder name, as in Experiment::kernel ("01-matmul")
    QString kernelDir; // absolute path of that folder in the run directory (read only)
    QString opType; // "matmul", "softmax", ... (KERNEL_TYPE)
    KernelRecord record; // profiled shapes, dtype, share of time, roofline numbers
    QString kernelPy; // the current kernel.py: the best kept version
    KernelStaticInfo staticInfo; // static check of kernelPy (constants with TUNE_SPACE candidates)
    DeviceInfo device;
    Metrics best; // metrics of the current kernel.py (roofline position: pctPeak, bound)
    QVector<Experiment> history; // earlier experiments of this kernel, in id order, with results and failures
    // Experiment id -> the kernel.py that experiment proposed, when the loop could read it back from
    // the run directory. The tune agent learns the configurations already tried from these texts.
    QHash<int, QString> historyKernelPy;
    // The run's other kernels of this op type whose head is a kept improvement, best first.
    QVector<PeerKernel> peers;
    // Configurations kept in earlier runs on this device for this op type and dtype (TuneMemory), the
    // same shapes first.
    QVector<TuneMemory::Entry> remembered;
    QString systemPrompt; // program.md filled by PromptBuilder (device, kernel, rules)
    // The same, only the sections this kernel needs (PromptBuilder::compact): for a model whose
    // context cannot hold the whole playbook.
    QString compactSystemPrompt;
    QString prompt; // the user message; empty = ContextPrompt::render(*this)
    int experimentId = 0; // id the proposal will be recorded under
};

} // namespace ak
