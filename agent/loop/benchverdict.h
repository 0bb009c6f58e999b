#pragma once

#include "experiment.h"
#include "loop/benchresult.h"

#include <QString>

namespace ak {

struct RunSnapshot;

// What the loop makes of one candidate's bench: the experiment's outcome and the words that explain
// it. A pure function of the bench, the run as the step saw it and the kernel's name, so that every
// branch (interrupted, harness problem, incorrect, slower, kept, held for review) is testable alone.
struct BenchVerdict
{
    ExperimentStatus status = ExperimentStatus::Kept;
    QString text; // empty for a plain keep
    bool environmentError = false; // the harness's problem, not the kernel's (the loop counts these)
    bool interrupted = false; // the loop was stopped during the bench: says nothing of the harness

    static BenchVerdict of(
        const BenchResult &bench, const RunSnapshot &run, const QString &kernel, bool stopRequested);

    // The failure in one line, with the exception's name from the traceback, secrets redacted: a
    // kernel writes its own failure text, and it is committed, logged and put in the next prompt.
    static QString failureOf(const BenchResult &bench);

    // Why a correct, faster result should wait for a person, or empty: anything the judge flagged,
    // and a speedup far beyond what the op reached in this run (or above 10x without a history).
    static QString suspicion(const BenchResult &bench, const RunSnapshot &run, const QString &kernel);
};

} // namespace ak
