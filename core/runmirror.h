#pragma once

#include "remoterun.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QSet>
#include <QTimer>

namespace ak {

// Keeps a local copy of a run directory on another machine (RemoteRun::cacheDir) up to date, so the
// window reads it with the same code as any local run (RunLoader, RunWatcher). Two processes, both
// over one shared ssh connection:
//
//   the lister  one ssh session for the mirror's whole life, a POSIX sh loop on the server that
//               prints, twice a second, the files changed since its last round (`find -newermt`;
//               the git objects by their changed fan-out folders only, so a round costs the same on
//               a 10k-experiment run as on a new one) and whether the run's lock exists;
//   rsync       the first copy (`rsync -a --delete`), then exactly the files the lister named
//               (`--files-from`), one transfer at a time, the names of a round gathered meanwhile;
//               on the server, its own rsync or else the bundle's (RemoteRun::remoteRsync).
//
// Each ssh command starts the user's login shell there (.bashrc, conda, pyenv: up to a second), so
// a pass that found nothing costs no new command, and the lister is never restarted while it lives.
// A reader may for a moment see a log line before the commit it names (the loader reads no object;
// a diff asked for in that moment shows on the next selection). A dropped lister or a failed
// transfer is reported and started again with back-off, from a full copy (a dropped network heals
// by itself). Never blocks the caller.
//
// The mirror is read-only by contract: nothing local writes it; steering goes to the remote writer
// (RemoteControl). The remote run's lock file comes along, so the window can say who writes it.
class RunMirror : public QObject
{
    Q_OBJECT
public:
    static constexpr int MaxRetryMs = 30000;

    explicit RunMirror(const RemoteRun &run, QObject *parent = nullptr);
    ~RunMirror() override;

    const RemoteRun &run() const { return m_run; }
    QString localDir() const { return m_local; }

    void start();
    void stop();
    bool isRunning() const { return m_running; }
    int passes() const { return m_passes; } // successful transfers, the first copy included
    QString lastError() const { return m_lastError; }
    qint64 lastPassMs() const { return m_lastPassMs; } // the last transfer's time

    // The commands (program first): the whole copy, the lister, and fetching the listed files.
    QStringList fullCommand() const;
    QStringList listerCommand() const;
    QStringList fetchCommand() const;

Q_SIGNALS:
    // A transfer finished; the first (the whole copy) makes the mirror usable. `changed`: it copied
    // or deleted something.
    void synced(bool first, bool changed);
    // Something failed: `error` says why in words (ssh's or rsync's own message included). The
    // mirror starts again after a back-off unless stopped.
    void failed(const QString &error, bool first);

private:
    void restart();
    void listerOutput();
    void listerEnded();
    void fetchNext();
    void transferFinished(int exitCode, QProcess::ExitStatus status);
    void fail(const QString &error);
    QString describe(const QProcess &p, int exitCode, const QString &stderrText) const;

    RemoteRun m_run;
    QString m_local;
    QProcess m_lister;
    QProcess m_rsync;
    QByteArray m_listerBuffer;
    QSet<QString> m_round; // names of the lister's round being read
    QSet<QString> m_pending; // to fetch once the transfer running is done
    bool m_fullPending = false; // the whole copy waits for the lister's #start
    bool m_fullRunning = false;
    bool m_remoteLock = false;
    QTimer m_retry;
    QElapsedTimer m_clock;
    bool m_running = false;
    int m_passes = 0;
    int m_failures = 0;
    qint64 m_lastPassMs = 0;
    QString m_lastError;
};

} // namespace ak
