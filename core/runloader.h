#pragma once

#include "experimentlog.h"
#include "runsnapshot.h"

#include <QString>

namespace ak {

// Builds the in-memory model of a run directory from run.json and experiments.jsonl. It needs no
// lock and never walks git history (the log is the index, git the content store), so a GUI can load
// a run that another process is writing: a record still being appended is simply not seen yet.
class RunLoader
{
public:
    // nullptr with `error` set when `dir` is not a run directory; problems inside the files (a bad log
    // line, a malformed run.json or verification.json) become snapshot warnings naming file and line
    // or field.
    static RunSnapshotPtr load(const QString &dir, QString *error = nullptr);
    // The same run as `previous` with what was appended to its log since: only the new lines are
    // read and applied. A full load() when that cannot be trusted (run.json changed on disk, the log
    // shorter than what was read, no previous snapshot). verification.json and the best ref are read
    // again either way. Same result as load(), at a cost that does not grow with the run.
    static RunSnapshotPtr reload(const RunSnapshotPtr &previous, QString *error = nullptr);

    // Folds one log entry into a snapshot under construction. Shared with RunStore so the writer and
    // every reader interpret the log the same way.
    static void apply(RunSnapshot &s, const LogEntry &e);
    // Puts kernels in rank order and experiments in id order, rebuilding the indexes.
    static void finish(RunSnapshot &s);
    // Reads run.json into runJson and config (its device with roofs.json's measured roofs when it
    // has none), and starts review mode from it; false with `error` if malformed.
    static bool applyRunJson(RunSnapshot &s, const QByteArray &data, QString *error);
    // run.json changed under a loaded snapshot (a move-on change): runJson and config only, so the
    // log's review changes and the measured roofs folded into config.device stay.
    static bool setRunJson(RunSnapshot &s, const QByteArray &data, QString *error);

    // Reads verification.json and refs/heads/best into a snapshot whose log is applied.
    static void readSideFiles(RunSnapshot &s);
};

} // namespace ak
