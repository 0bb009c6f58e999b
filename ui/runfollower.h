#pragma once

#include "looplogfile.h"
#include "runsnapshot.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

namespace ak {

class RunWatcher;

// Follows the run the window shows: loads it off the GUI thread, watches its files and loads it again
// when another process (the loop, the CLI) writes them, and reads the loop's live lines (LoopLogFile)
// that other processes append. The latest open or reload wins; a stale result is dropped. What is
// loaded, what failed and what the loop said leave through signals; showing them is the window's.
class RunFollower : public QObject
{
    Q_OBJECT
public:
    using Loader = std::function<RunSnapshotPtr(const QString &dir, QString *error)>;

    explicit RunFollower(QObject *parent);
    ~RunFollower() override;

    // Replaces RunLoader (tests); reloads then go through it too instead of RunLoader::reload.
    void setLoader(Loader loader);

    // Loads `dir` in the background: loaded or failed follows, and from then on its files are watched.
    void open(const QString &dir);
    // Loads `dir` again. When `shown` is that run (and the loader is RunLoader's), only what was
    // appended to its log since is read. One reload at a time: one asked for meanwhile runs after it.
    void reload(const QString &dir, const RunSnapshotPtr &shown);
    // Coalesces bursts of change notifications into one reloadDue.
    void scheduleReload();

Q_SIGNALS:
    // Time to reload (the window decides whether to: not while a replay shows the past).
    void reloadDue();
    void loaded(const QString &dir, const ak::RunSnapshotPtr &snapshot, bool isReload);
    void failed(const QString &dir, const QString &error);
    // A line another process's loop wrote to the run's loop log.
    void loopLine(const QString &text);

private:
    void startLoad(const QString &dir, bool isReload, const RunSnapshotPtr &previous);
    void watch(const QString &dir);
    // The loop's live lines written by another process since the last look leave through loopLine;
    // `opened`: a run was just opened, so start at the file's end (only what is new from now).
    void tailLoopLog(const QString &dir, bool opened);

    Loader m_loader;
    bool m_defaultLoader = true;
    quint64 m_generation = 0;
    QTimer m_reloadTimer;
    bool m_reloadInFlight = false; // a reload's load runs; another waits for it (m_reloadAgain)
    bool m_reloadAgain = false;
    RunWatcher *m_watcher = nullptr;
    LoopLogFile::Position m_loopLog; // how far the shown run's loop log was read
    quint64 m_loopLogGeneration = 0; // another run opened: a read of the old one's file is dropped
    bool m_loopLogReading = false;
    bool m_loopLogAgain = false; // a reload came while a read ran: read once more after it
};

} // namespace ak
