#pragma once

#include <QMutex>
#include <QMutexLocker>
#include <QSet>
#include <QString>

namespace ak {

class RunStore;

// The run's store and the kernels the device loops have claimed, reachable only through this handle,
// which holds the session's lock from LoopSession::lock() until it is destroyed or unlock() is
// called (Qt Creator's SynchronizedValue is the model). A loop holds it for run-store work only,
// never while an agent or the harness runs.
class LockedStore
{
public:
    LockedStore(QMutex *mutex, RunStore *store, QSet<QString> *claimed)
        : m_lock(mutex)
        , m_store(store)
        , m_claimed(claimed)
    { }

    RunStore *operator->() const
    {
        Q_ASSERT(m_store);
        return m_store;
    }
    RunStore &store() const
    {
        Q_ASSERT(m_store);
        return *m_store;
    }
    QSet<QString> &claimed() const
    {
        Q_ASSERT(m_claimed);
        return *m_claimed;
    }
    // Releases the lock early; the handle gives nothing out afterwards.
    void unlock()
    {
        m_store = nullptr;
        m_claimed = nullptr;
        m_lock.unlock();
    }

private:
    QMutexLocker<QMutex> m_lock;
    RunStore *m_store;
    QSet<QString> *m_claimed;
};

} // namespace ak
