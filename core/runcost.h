#pragma once

#include "runsnapshot.h"

#include <QString>

#include <cmath>

namespace ak {

// What the loop's search cost, per unit of what it found (#43 item 6): money (the user's price table
// over the server's token counts), else tokens (an LLM agent without a price), else time (the tune
// agent: what it spends is the machine's), per experiment, per kept kernel and per point of model
// speedup. A point is one percent of model speedup: verify's measured one where the run was
// verified, else the Amdahl projection of the heads (and the text says which).
struct RunCost
{
    int experiments = 0; // every experiment but the baselines
    int keptKernels = 0; // kernels with at least one experiment kept (or pending review)
    qint64 tokens = 0; // prompt + completion, summed
    double money = 0; // USD from the price table; 0 when no experiment had a price
    double seconds = 0; // agent + bench time, summed
    double speedupPoints = std::nan(""); // (model speedup - 1) x 100; NaN or <= 0: nothing to divide by
    bool measured = false; // speedupPoints from verify (else projected)

    enum class Unit { Money, Tokens, Time };
    Unit unit() const { return money > 0 ? Unit::Money : tokens > 0 ? Unit::Tokens : Unit::Time; }
    double total() const; // in unit()
    // total() / n; NaN when n is not positive (no kept kernel, no speedup)
    double per(double n) const { return n > 0 ? total() / n : std::nan(""); }
    double perExperiment() const { return per(experiments); }
    double perKeptKernel() const { return per(keptKernels); }
    double perPoint() const { return per(speedupPoints); }

    static RunCost of(const RunSnapshot &run);
    // "$0.0123", "2.1k tokens", "41 s" / "12.5 min" / "1.4 h"; "—" for NaN.
    QString format(double value) const;
    // "$0.012/experiment · $0.52/kept kernel · $0.31/point of model speedup (measured)"; empty before
    // the first experiment.
    QString text() const;
};

} // namespace ak
