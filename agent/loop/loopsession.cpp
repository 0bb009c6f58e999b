#include "loop/loopsession.h"

namespace ak {

LoopSession::LoopSession(std::unique_ptr<RunStore> store)
    : m_store(std::move(store))
    , m_runDir(m_store ? m_store->dir() : QString())
{
    m_clock.start();
}

void LoopSession::setBudget(double seconds, int maxExperiments)
{
    m_budgetSeconds = seconds;
    m_maxExperiments = maxExperiments;
}

bool LoopSession::budgetSpent()
{
    if (m_budgetSeconds > 0 && m_clock.elapsed() / 1000.0 >= m_budgetSeconds) {
        setEndReason(QStringLiteral("time budget of %1 s spent").arg(m_budgetSeconds, 0, 'g', 6));
        return true;
    }
    if (m_maxExperiments > 0 && stats().experiments >= m_maxExperiments) {
        setEndReason(QStringLiteral("%1 experiments done").arg(m_maxExperiments));
        return true;
    }
    return false;
}

void LoopSession::requestStop(const QString &reason, bool failure)
{
    if (!reason.isEmpty())
        setEndReason(reason);
    if (failure)
        m_failed.store(true);
    m_stop.store(true);
    QMutexLocker lock(&m_pauseMutex);
    m_pauseChanged.wakeAll();
}

void LoopSession::setPaused(bool paused)
{
    QMutexLocker lock(&m_pauseMutex);
    m_paused.store(paused);
    m_resumeAt = QDeadlineTimer(QDeadlineTimer::Forever);
    m_pauseChanged.wakeAll();
}

void LoopSession::pauseFor(const QString &reason, int seconds)
{
    {
        QMutexLocker lock(&m_pauseMutex);
        if (m_paused.load() && m_resumeAt.isForever())
            return; // a person paused it: theirs to resume
        m_paused.store(true);
        m_resumeAt
            = seconds < 0 ? QDeadlineTimer(QDeadlineTimer::Forever) : QDeadlineTimer(qint64(seconds) * 1000);
        m_pauseChanged.wakeAll();
    }
    if (onSelfPause)
        onSelfPause(reason);
}

bool LoopSession::pausedUntilResumed() const
{
    QMutexLocker lock(&m_pauseMutex);
    return m_paused.load() && m_resumeAt.isForever();
}

bool LoopSession::waitWhilePaused()
{
    QMutexLocker lock(&m_pauseMutex);
    bool resumedByItself = false;
    while (m_paused.load() && !m_stop.load()) {
        if (!m_resumeAt.isForever() && m_resumeAt.hasExpired()) {
            m_paused.store(false);
            m_resumeAt = QDeadlineTimer(QDeadlineTimer::Forever);
            resumedByItself = true;
            break;
        }
        m_pauseChanged.wait(&m_pauseMutex, m_resumeAt);
    }
    const bool go = !m_stop.load();
    lock.unlock();
    if (resumedByItself && onSelfPause)
        onSelfPause(QString());
    return go;
}

void LoopSession::setEndReason(const QString &reason)
{
    QMutexLocker lock(&m_statsMutex);
    if (m_endReason.isEmpty())
        m_endReason = reason;
}

QString LoopSession::endReason() const
{
    QMutexLocker lock(&m_statsMutex);
    return m_endReason;
}

LoopStats LoopSession::count(bool kept, bool failed, double overheadMs, const QString &line)
{
    QMutexLocker lock(&m_statsMutex);
    ++m_stats.experiments;
    m_stats.kept += kept ? 1 : 0;
    m_stats.failed += failed ? 1 : 0;
    m_stats.overheadMsTotal += overheadMs;
    m_stats.lastLine = line;
    m_stats.elapsedSeconds = m_clock.elapsed() / 1000.0;
    return m_stats;
}

LoopStats LoopSession::stats() const
{
    QMutexLocker lock(&m_statsMutex);
    LoopStats s = m_stats;
    s.elapsedSeconds = m_clock.elapsed() / 1000.0;
    return s;
}

} // namespace ak
