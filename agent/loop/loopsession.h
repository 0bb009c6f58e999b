#pragma once

#include "loop/lockedstore.h"
#include "runstore.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QHash>
#include <QMutex>
#include <QSet>
#include <QString>
#include <QWaitCondition>

#include <atomic>
#include <functional>
#include <memory>

namespace ak {

// Totals of one loop invocation (all devices), for the live line and the summary.
struct LoopStats
{
    int experiments = 0; // finished experiments (baselines excluded)
    int kept = 0;
    int failed = 0; // failed, crashed, timed out
    double elapsedSeconds = 0;
    double overheadMsTotal = 0; // loop time outside agent and harness (static check, commit, log)
    QString lastLine;

    double perHour() const { return elapsedSeconds > 0 ? experiments * 3600.0 / elapsedSeconds : 0; }
};

// What the device loops of one invocation share: the run's single writer (RunStore, not thread-safe,
// so reachable only through lock()), which kernel each loop has claimed, the pause / stop switches
// and the budget.
class LoopSession
{
public:
    explicit LoopSession(std::unique_ptr<RunStore> store);

    // The run's directory, readable without the lock (messages are written from loop threads that may
    // hold it).
    QString runDir() const { return m_runDir; }

    // The store and the claims, under the session's lock for as long as the handle lives.
    LockedStore lock() { return LockedStore(&m_mutex, m_store.get(), &m_claimed); }

    void setBudget(double seconds, int maxExperiments);
    // True when the budget (time or experiment count) is spent; sets the end reason once.
    bool budgetSpent();

    // `failure`: the loop cannot go on (harness unusable, kernel.py unreadable, agent misconfigured).
    void requestStop(const QString &reason = QString(), bool failure = false);
    bool failed() const { return m_failed.load(); }
    bool stopRequested() const { return m_stop.load(); }
    // A person's pause or resume; either ends a pause the loop took itself.
    void setPaused(bool paused);
    bool paused() const { return m_paused.load(); }
    // The loop pauses itself (the agent's breaker, ExperimentLoop): until `seconds` pass, a person
    // resumes, or a stop. onSelfPause is called with the reason now, and with an empty reason when
    // the time is up and the loop goes on by itself.
    // `seconds` < 0: until a person resumes (a configuration error).
    void pauseFor(const QString &reason, int seconds);
    // Whether the current pause lasts until a person resumes (pauseFor with seconds < 0).
    bool pausedUntilResumed() const;
    // Blocks while paused; false when a stop arrived (before or during the wait).
    bool waitWhilePaused();

    void setEndReason(const QString &reason); // first reason wins
    QString endReason() const;

    // Records a finished experiment in the totals; returns the updated totals.
    LoopStats count(bool kept, bool failed, double overheadMs, const QString &line);
    LoopStats stats() const;

    // Called (from loop threads, no lock held) with one line per event worth showing a person.
    std::function<void(const QString &line)> onMessage;
    // Called (from a loop thread) when the loop pauses itself, and again (empty reason) when that
    // pause ends by itself.
    std::function<void(const QString &reason)> onSelfPause;

private:
    std::unique_ptr<RunStore> m_store;
    QString m_runDir;
    QMutex m_mutex;
    QSet<QString> m_claimed;
    std::atomic<bool> m_stop { false };
    std::atomic<bool> m_paused { false };
    std::atomic<bool> m_failed { false };
    mutable QMutex m_pauseMutex;
    QWaitCondition m_pauseChanged;
    QDeadlineTimer m_resumeAt { QDeadlineTimer::Forever }; // a self-pause's end; Forever otherwise
    mutable QMutex m_statsMutex;
    LoopStats m_stats;
    QElapsedTimer m_clock;
    double m_budgetSeconds = 0;
    int m_maxExperiments = 0;
    QString m_endReason;
};

} // namespace ak
