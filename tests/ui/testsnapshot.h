#pragma once

#include "runsnapshot.h"

#include <memory>

// Hand-built run snapshots for the ui tests: three kernels, a few experiments on the first.
namespace ak::test {

inline KernelRecord kernel(int rank, const QString &name, const QString &op, double timeUs, double share)
{
    KernelRecord k;
    k.rank = rank;
    k.name = name;
    k.opType = op;
    k.folder = QStringLiteral("kernels/%1-%2").arg(rank, 2, 10, QLatin1Char('0')).arg(op);
    k.dtype = QStringLiteral("bf16");
    k.shapes = { QStringLiteral("[4096, 4096]") };
    k.timeUs = timeUs;
    k.share = share;
    k.calls = 4;
    k.floorUs = timeUs / k.calls / 3.0;
    k.maxSpeedup = 3.0;
    k.modelSpeedupAt90 = 1.0 + share;
    return k;
}

inline Experiment experiment(
    int id, const QString &kernel, ExperimentStatus status, double speedup, double pct)
{
    Experiment e;
    e.id = id;
    e.kernel = kernel;
    e.status = status;
    e.commit = QStringLiteral("%1").arg(id, 40, 16, QLatin1Char('a'));
    e.parent = id > 1 ? QStringLiteral("%1").arg(id - 1, 40, 16, QLatin1Char('a')) : QString();
    e.agent = QStringLiteral("tune");
    e.description = QStringLiteral("attempt %1").arg(id);
    e.metrics.correct = status != ExperimentStatus::Failed;
    if (e.metrics.correct) {
        e.metrics.speedup = speedup;
        e.metrics.pctPeak = pct;
        e.metrics.latencyUs = 100.0 / speedup;
        e.metrics.tflops = pct * 9.89;
        e.metrics.bound = QStringLiteral("compute");
    }
    return e;
}

// withExperiments = false: a freshly profiled run.
inline std::shared_ptr<RunSnapshot> makeRun(const QString &dir, bool withExperiments = true)
{
    auto s = std::make_shared<RunSnapshot>();
    s->runDir = dir;
    s->config.model = QStringLiteral("gpt2");
    s->config.device.available = true;
    s->config.device.name = QStringLiteral("NVIDIA H200");
    s->config.device.vendor = QStringLiteral("nvidia");
    s->config.device.smCount = 132;
    s->kernels = { kernel(1, QStringLiteral("nvjet_tst_128x256"), QStringLiteral("matmul"), 1200.0, 0.55),
        kernel(2, QStringLiteral("softmax_warp_forward"), QStringLiteral("softmax"), 600.0, 0.275),
        kernel(3, QStringLiteral("vectorized_layer_norm"), QStringLiteral("layernorm"), 80.0, 0.0367) };
    for (int i = 0; i < s->kernels.size(); ++i)
        s->kernelIndex.insert(s->kernels[i].folder.mid(8), i);
    if (withExperiments) {
        const QString mm = QStringLiteral("01-matmul");
        s->experiments = { experiment(1, mm, ExperimentStatus::Baseline, 1.0, 40.0),
            experiment(2, mm, ExperimentStatus::Reverted, 0.9, 36.0),
            experiment(3, mm, ExperimentStatus::Kept, 1.3, 52.0),
            experiment(4, mm, ExperimentStatus::Failed, 0, 0),
            experiment(5, mm, ExperimentStatus::Kept, 1.5, 60.0),
            experiment(6, QStringLiteral("02-softmax"), ExperimentStatus::Pending, 1.1, 20.0) };
        for (int i = 0; i < s->experiments.size(); ++i)
            s->experimentIndex.insert(s->experiments[i].id, i);
        s->kernels[0].headExperiment
            = 5; // as the loader sets it: the newest keep (pending ones are not heads)
    }
    return s;
}

} // namespace ak::test
