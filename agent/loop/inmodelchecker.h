#pragma once

#include "inmodelcheck.h"
#include "runsnapshot.h"
#include "workerreply.h"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QString>

#include <functional>
#include <optional>

namespace ak {

struct InModelCheckConfig
{
    // The checks of one loop may take at most this % of its wall time (#38: plug-check and in-model
    // checks <= 10 % of a run). 0 switches them off.
    double budgetPct = 10.0;
    int rounds = 5; // alternating timing rounds of the A/B
    double targetSeconds = 0.05; // one timed sample (forwards are batched up to it)
    int timeoutSec = 600;
};

// The model's verdict on a keep during the run (#38 item 5): after the loop keeps a kernel, the kept
// kernel.py alone is plugged into the model and timed against the model as written (the worker's
// `inmodel` op, agent/python/modelplug/inmodel.py) on the loop's device and worker. Checks are rationed
// by a time budget: a check runs only while the checks so far took at most budgetPct of the loop's wall
// time, so a streak of keeps is checked at its latest keep once the budget allows, never each one.
class InModelChecker
{
public:
    // The worker's request (WorkerClient::request on the loop's worker).
    using RequestFn
        = std::function<WorkerReply(const QString &op, const nlohmann::json &args, int timeoutMs)>;

    InModelChecker(RequestFn request, InModelCheckConfig config);

    // Whether keep `e` is checked now; otherwise *why says why not (for the log, never an error).
    bool due(const RunSnapshot &run, const Experiment &e, QString *why) const;

    // The worker's args for checking the kernel of keep `e` on `device`; empty with *error set.
    nlohmann::json requestArgs(
        const RunSnapshot &run, const Experiment &e, const QString &device, QString *error) const;
    // Runs the check (blocking, on the loop's thread). nullopt with *error when the worker could not
    // answer (*cancelled when a stop cancelled it); a kernel that does not plug or breaks parity is a
    // check (not positive), not an error.
    std::optional<InModelCheck> check(const RunSnapshot &run, const Experiment &e, const QString &device,
        QString *error, bool *cancelled = nullptr);

    double spentSeconds() const { return m_spentSeconds; }
    double elapsedSeconds() const { return m_clock.elapsed() / 1000.0; }

private:
    RequestFn m_request;
    InModelCheckConfig m_config;
    QElapsedTimer m_clock; // the loop's wall time, since this checker was made
    double m_spentSeconds = 0;
    double m_lastSeconds = 0; // the last check's cost: the guess for the next one
};

} // namespace ak
