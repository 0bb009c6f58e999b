#pragma once

#include "runsnapshot.h"

#include <QDateTime>
#include <QPair>
#include <QString>
#include <QVector>

#include <cmath>

namespace ak {

// What a run has done so far, counted once for the window's summary bar and the HTML report.
struct RunStats
{
    int attempts = 0; // experiments other than the baselines
    int kept = 0;
    int pending = 0;
    int reverted = 0;
    int failed = 0; // failed, crashed, timed out
    int rejected = 0;
    int running = 0;
    int pytorchWins = 0; // kernels done and still slower than PyTorch's own (RunSnapshot::pytorchWins)
    // What proposing cost, summed over every experiment (LLM agents; 0 for the others).
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double cost = 0; // USD
    QDateTime first; // the first experiment started
    QDateTime last; // the last one finished
    QString currentKernel; // the kernel of the newest running experiment; empty when none runs
    // Experiments finished per hour over the last RateWindowMinutes before `last` (NaN with fewer
    // than two finishes there): the loop's current pace, not its average since the start.
    double perHour = std::nan("");
    static constexpr int RateWindowMinutes = 30;

    static RunStats of(const RunSnapshot &run);
    // The projected model speedup (RunSnapshot::projectedSpeedup's Amdahl) after each experiment that
    // changed a kernel's head, in the order the experiments were decided (decidedAt, ties by id), each
    // projection from only the results known at that moment: (experiment id, projection). Not in id
    // order: the loop numbers every kernel's baseline when it starts but measures each one only when
    // it reaches that kernel, after other kernels' keeps. A head is the newest keep or baseline of its
    // kernel (by id, as the loader sets it) among those decided so far; pending experiments are not
    // heads.
    static QVector<QPair<int, double>> projectedTimeline(const RunSnapshot &run);
    // When an experiment's result took effect: its finish, or its start while it has none (a baseline
    // not measured yet). Invalid when it has neither; such experiments come last, in id order.
    static QDateTime decidedAt(const Experiment &e);
    // "4 kept · 38 pending · 25 reverted · 0 failed · 0 rejected · 0 running", then
    // " · PyTorch wins on 2 kernels" when it does
    QString countsText() const;
};

} // namespace ak
