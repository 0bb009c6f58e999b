#pragma once

#include "experiment.h"
#include "runsnapshot.h"
#include "steerrequest.h"

#include <QString>
#include <QStringList>

namespace ak {

// The one way to steer a run from outside its loop: the CLI's steering subcommands, the window's
// DirectoryControl and LocalLoop all call steer(). A run has a single writer (RunLock): when nobody
// writes it, steer() becomes the writer for a moment and applies the request; when another process
// holds the lock, it queues the request for that writer, which applies it between experiments
// (RunStore::applyRequests). Either way the caller learns which, and words it for its own user.
//
// Blocking (the lock, a repair, git): call it off the GUI thread.
class RunSteering
{
public:
    struct Outcome
    {
        enum class Kind {
            Applied, // nobody wrote the run: applied now
            Queued, // the writer `writer` applies it between experiments
            Refused, // the run was opened but the request cannot be carried out: `message` says why
            Failed, // nothing was done: the run cannot be opened and nobody writes it, or the queue cannot be
                    // written
        };
        Kind kind = Kind::Failed;
        // Refused, Failed: the error. Queued: "queued for the writer of the run (pid N), which applies
        // it between experiments". Applied: empty.
        QString message;
        qint64 writer = 0; // Queued: pid of the process holding the run's lock
        // Queued: the request's file name; the writer's outcome appears under it
        // (RequestQueue::outcome).
        QString request;
        QStringList repairNotes; // Applied, Refused: what opening the run repaired first
        Experiment created; // Applied revert: the new experiment
        RunSnapshotPtr state; // Applied, Refused: the run as the writer left it

        bool ok() const { return kind == Kind::Applied || kind == Kind::Queued; }
    };

    // Who writes the run, when the caller knows better than the lock file.
    enum class Writer {
        Unknown, // try to become the writer; queue if another process is
        ThisProcess, // our own loop runs (LocalLoop): queue for it without touching the lock
    };

    // Review mode switched to what it already is changes nothing (no log line), as the CLI and the
    // window have always done; a queued one is logged by the writer either way.
    static Outcome steer(const QString &runDir, const SteerRequest &request, Writer writer = Writer::Unknown);
};

} // namespace ak
