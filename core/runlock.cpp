#include "runlock.h"

#include <QDir>
#include <QFile>
#include <QLockFile>
#include <QThread>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace ak {

RunLock::RunLock(const QString &runDir)
    : m_lock(std::make_unique<QLockFile>(lockPath(runDir)))
    , m_path(lockPath(runDir))
{
    // Age alone never makes a lock stale: a loop may legitimately run for days. Only a holder that
    // no longer exists does (QLockFile checks the pid on this host).
    m_lock->setStaleLockTime(0);
}

RunLock::~RunLock() = default;

QString RunLock::lockPath(const QString &runDir)
{
    return QDir(runDir).filePath(QStringLiteral(".git/autokernel.lock"));
}

bool RunLock::acquire(QString *error)
{
    if (m_lock->isLocked())
        return true;
    if (m_lock->tryLock(0))
        return true;
    if (m_lock->error() == QLockFile::LockFailedError && isTornAndFree() && QFile::remove(m_path)
        && m_lock->tryLock(0))
        return true;
    if (error) {
        qint64 pid = 0;
        QString host, app;
        switch (m_lock->error()) {
        case QLockFile::LockFailedError:
            if (m_lock->getLockInfo(&pid, &host, &app))
                *error = QStringLiteral("run is locked by pid %1 (%2 on host %3); lock file %4")
                             .arg(pid)
                             .arg(app.isEmpty() ? QStringLiteral("unknown program") : app,
                                 host.isEmpty() ? QStringLiteral("?") : host, m_path);
            else
                *error = QStringLiteral("run is locked by another process; lock file %1").arg(m_path);
            break;
        case QLockFile::PermissionError:
            *error = QStringLiteral("%1: no permission to create the lock file").arg(m_path);
            break;
        default:
            *error = QStringLiteral("%1: cannot create the lock file").arg(m_path);
            break;
        }
    }
    return false;
}

bool RunLock::isTornAndFree() const
{
    // QLockFile recognises a dead holder by the pid inside the file. A holder killed between creating
    // the file and writing its pid leaves an empty file that QLockFile would treat as held for ever
    // (we disabled age-based staleness). QLockFile also holds flock() on the file while it owns it:
    // if the content is unreadable and nobody holds the flock, twice 100 ms apart (a live writer
    // takes it microseconds after creating the file), the lock is a torn leftover.
    for (int attempt = 0; attempt < 2; ++attempt) {
        qint64 pid = 0;
        QString host, app;
        if (m_lock->getLockInfo(&pid, &host, &app))
            return false;
        const int fd = ::open(QFile::encodeName(m_path).constData(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
        ::close(fd);
        if (!free)
            return false;
        if (attempt == 0)
            QThread::msleep(100);
    }
    return true;
}

void RunLock::release()
{
    if (m_lock->isLocked())
        m_lock->unlock();
}

bool RunLock::isHeld() const
{
    return m_lock->isLocked();
}

qint64 RunLock::holderPid(const QString &runDir)
{
    QLockFile probe(lockPath(runDir));
    qint64 pid = 0;
    QString host, app;
    return probe.getLockInfo(&pid, &host, &app) ? pid : 0;
}

} // namespace ak
