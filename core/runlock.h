#pragma once

#include <QString>

#include <memory>

class QLockFile;

namespace ak {

// The single-writer lock of a run directory (`.git/autokernel.lock`, outside the working tree so it
// never shows in `git status`). Built on QLockFile: the file names the holder's pid and host, and a
// lock left by a process that no longer exists on this host is removed and taken over. Readers (the
// loader, the watcher) never take it.
class RunLock
{
public:
    explicit RunLock(const QString &runDir);
    ~RunLock();
    RunLock(const RunLock &) = delete;
    RunLock &operator=(const RunLock &) = delete;

    // Non-blocking. On failure `error` names the holder: "run is locked by pid 4242 (autokernel-cli
    // on host gpu1) ...".
    bool acquire(QString *error);
    void release();
    bool isHeld() const;

    static QString lockPath(const QString &runDir);
    // pid of the process holding the lock of `runDir`, 0 if none (the file may be stale).
    static qint64 holderPid(const QString &runDir);

private:
    bool isTornAndFree() const;

    std::unique_ptr<QLockFile> m_lock;
    QString m_path;
};

} // namespace ak
