#pragma once

#include "runsteering.h"

#include <QString>

namespace ak::cli {

// What a steering command (pin, skip, revert, accept, reject, review, rules) tells the user about
// RunSteering's outcome, the same way for each: repair notes on stderr; failed → usage error (2);
// queued → `queuedLine` on stdout (0); refused → "autokernel-cli COMMAND: why" on stderr (1).
// Applied → -1: the caller prints its own result.
int reportSteerOutcome(const RunSteering::Outcome &o, const QString &command, const QString &queuedLine);

} // namespace ak::cli
