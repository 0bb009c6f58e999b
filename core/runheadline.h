#pragma once

#include "runsnapshot.h"

#include <QDateTime>
#include <QString>
#include <QVector>

#include <cmath>

namespace ak {

// What a run amounts to, in three parts that must not be confused (issue #41): what the starter
// kernels give over PyTorch, what the loop found on top of them, and what was measured in the model.
// The window's summary bar, View ▸ Presentation and the HTML report all say it from this one place.
//
// - starters: Amdahl over each kernel's share of the model's time with its baseline's paired speedup
//   over PyTorch (a starter slower than PyTorch counts as PyTorch's own, as verify leaves it out).
// - loop: projected model time with the starters ÷ projected model time with the heads, where a
//   head's time is its starter's time scaled by head latency ÷ baseline latency: the kernel's own
//   time, the quantity the keep rule compares, never a PyTorch time re-measured per experiment.
// - measured: verify's eager + final set against eager, with its date and device; none = not verified.
struct RunHeadline
{
    // One kernel whose head is a keep: its own time before and after the loop.
    struct LoopGain
    {
        QString kernel; // folder name, "03-softmax"
        int baseline = 0; // experiment ids
        int head = 0;
        double baselineUs = std::nan("");
        double headUs = std::nan("");
        double pct() const { return (baselineUs / headUs - 1.0) * 100.0; } // + = faster
    };

    double starters = std::nan(""); // × over PyTorch, projected; NaN: no baseline measured yet
    int startersMeasured = 0; // kernels with a correct, measured baseline
    double loopPct = std::nan(""); // % on top of the starters, projected; NaN: nothing to compare
    QVector<LoopGain> gains; // kernels the loop improved (head is a keep), by rank
    bool verified = false;
    double measured = std::nan(""); // verify's model speedup
    QDateTime measuredWhen;
    QString measuredDevice; // "NVIDIA H200"
    int finalSetSize = 0;
    bool parityOk = false;
    QString recording; // RunSnapshot::recording: not empty for a shipped recording

    static RunHeadline of(const RunSnapshot &run);
    // The newest correct, measured baseline of a kernel (by folder name); nullptr when none.
    static const Experiment *baselineOf(const RunSnapshot &run, const QString &kernel);

    // "starters 1.65× · loop +1.1 % · model not verified" (or "model 1.04× measured 2026-12-06 on
    // NVIDIA H200"): one line, plain text.
    QString text() const;
    QString startersText() const; // "1.65×" or "—"
    QString loopText() const; // "+1.1 %" or "—"
    QString measuredText() const; // "1.04× measured 2026-12-06 on NVIDIA H200" or "not verified"
    // A recording's "Recording · verified" / "Recording · not verified in the model"; empty otherwise.
    // Shown beside text() or measuredText(), which carry the date and device.
    QString recordingLabel() const;
    // What each number divides by, in sentences, with the loop's gain per kernel: the tooltip and the
    // report's note.
    QString explanation() const;

private:
    QString measuredWhere() const; // "2026-12-06 on NVIDIA H200"
};

} // namespace ak
