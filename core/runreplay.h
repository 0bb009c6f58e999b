#pragma once

#include "experimentlog.h"
#include "runsnapshot.h"

#include <QDateTime>
#include <QString>
#include <QVector>

#include <memory>

namespace ak {

// A run played back as it happened: the snapshot as it stood after each experiment ended, built by
// folding the log's lines in order with RunLoader::apply, so a replay shows the same table, chart
// and diffs (the commits are the run's own) as the run did live. Frame 0 is the profiled run before
// any experiment; frame f (1..frameCount()) is after the f-th line that ended an experiment (a
// baseline, a finish, a review decision, a revert); each frame's speedupHistory is the run-level
// chart as it stood then. Moving forward applies only the new lines;
// moving back rebuilds from the start (milliseconds for a 10k-experiment run).
class RunReplay
{
public:
    // Reads run.json and the whole log of `dir`; nullptr with `error` set when it is not a run.
    static std::shared_ptr<RunReplay> open(const QString &dir, QString *error = nullptr);
    // From run.json's state (`profiled`: config, side files, no log applied) and the log's entries.
    RunReplay(const RunSnapshot &profiled, QVector<LogEntry> entries);

    int frameCount() const { return int(m_frameEnd.size()) - 1; }
    // When the frame's experiment ended (frame 0: when the first line was written).
    QDateTime frameTime(int frame) const;
    // The experiment the frame ended (0 for frame 0).
    int frameExperiment(int frame) const;
    // Seconds from the run's first line to the frame's; what the timeline shows.
    double secondsInto(int frame) const;
    // The snapshot after `frame` (clamped). Its verification and best commit are the run's only at
    // the last frame: earlier, the model was not verified yet.
    RunSnapshotPtr snapshotAt(int frame);

private:
    // Folds entries [fromEntry, toEntry) into s and puts it in rank and id order.
    void applyThrough(RunSnapshot &s, int fromEntry, int toEntry) const;

    RunSnapshot m_profiled; // run.json, side files; no log applied
    QVector<LogEntry> m_entries;
    QVector<int> m_frameEnd; // frame f holds entries [0, m_frameEnd[f])
    QDateTime m_start; // the log's first line: the run's creation
    RunSnapshot m_cursor; // after m_cursorFrame (forward moves continue from here)
    int m_cursorFrame = 0;
};

} // namespace ak
