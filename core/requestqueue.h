#pragma once

#include <nlohmann/json.hpp>

#include <QString>

namespace ak {

// The queue of requests to a run's writer (RunStore, which holds the run's lock): the one place
// requests from processes that do not hold the lock are queued (.git/autokernel-requests/) and the
// writer's outcome of each is read back (done/). Its own class so that the queue's file layout lives
// in one place, apart from the writer that drains it (RunStore::applyRequests).
class RequestQueue
{
public:
    // Queues a steering request (SteerRequest::toJson; RunSteering::steer is the usual way in) for
    // the process that holds the lock (the GUI while the CLI runs the loop). The writer reads it back
    // with SteerRequest::fromJson and applies it in RunStore::applyRequests(). Any JSON object with an
    // "action" is written, so a malformed request reaches the writer and is reported there. A read-only
    // run (RunStore::readOnlyReason) is refused. `name`: the queued file's name, under which the
    // writer records the outcome (outcome()).
    static bool queue(
        const QString &runDir, const nlohmann::json &request, QString *error, QString *name = nullptr);

    // What the writer did with the queued request `name`: RunStore::applyRequests() records it
    // (recordOutcome) in doneDir(runDir)/<name> as {"ok", "text"}, since a refusal leaves no trace in the
    // log and the requester (the window) would otherwise never hear of it. Returns false while there is
    // no record yet; `remove` deletes a record that was read, so each outcome is reported once.
    struct Outcome
    {
        bool ok = false;
        QString text; // applied: what was done; refused: why
    };
    static bool outcome(const QString &runDir, const QString &name, Outcome *out, bool remove);
    // The writer's side: records the outcome of request `name` (best effort: the request itself was
    // carried out, or refused, either way) and drops records older than OutcomeKeepSecs.
    static void recordOutcome(const QString &runDir, const QString &name, bool ok, const QString &text);
    static void pruneOutcomes(const QString &runDir);
    // Records nobody read (the requester closed, or never looks: LocalLoop) are dropped after this long.
    static constexpr qint64 OutcomeKeepSecs = 24 * 3600;

    // Where queued requests wait (the run's .git/autokernel-requests) and where outcomes are recorded.
    static QString dir(const QString &runDir);
    static QString doneDir(const QString &runDir);
};

} // namespace ak
