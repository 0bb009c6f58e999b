#pragma once

#include <QString>
#include <QStringList>

namespace ak {

// A run directory on another machine, named `ssh://[user@]host[:port]/path/to/run` (a path that
// starts with /~/ is relative to the remote home). The window mirrors it into a local cache with
// rsync over ssh (RunMirror) and steers it by running the remote `autokernel-cli` over ssh
// (RemoteControl): docs/remote.md. Nothing here runs a process; it only builds the commands.
//
// How ssh is called comes from the user: $AUTOKERNEL_SSH (ssh words, e.g. `ssh -F ~/.ssh/lab`) else
// plain `ssh`, which reads ~/.ssh/config as always. We add BatchMode (a password prompt would hang
// the window), keep-alives and connection sharing (one TCP + key exchange for every poll and request
// instead of one each), unless the user's words set them.
class RemoteRun
{
public:
    static bool isRemote(const QString &text); // starts with ssh://

    // Parses an ssh:// URL; on error returns an invalid RemoteRun and sets *error naming what is wrong.
    static RemoteRun parse(const QString &url, QString *error);

    bool isValid() const { return !m_host.isEmpty() && !m_path.isEmpty(); }
    QString url() const;
    QString host() const { return m_host; } // [user@]host
    int port() const { return m_port; } // 0: ssh's default
    QString path() const { return m_path; } // absolute, or relative to the remote home
    QString display() const; // host:path, for titles and messages

    // The ssh program and its own options, from $AUTOKERNEL_SSH unless set here.
    void setSsh(const QStringList &words) { m_ssh = words; }
    // The remote command that runs autokernel-cli: $AUTOKERNEL_REMOTE_CLI, else `autokernel-cli`
    // (a bundle unpacked elsewhere: `env LD_LIBRARY_PATH=/opt/ak/lib /opt/ak/bin/autokernel-cli`).
    void setRemoteCli(const QStringList &words) { m_cli = words; }
    QStringList remoteCli() const { return m_cli; }
    // The folder of the remote autokernel-cli when its command names it by a path (an unpacked
    // bundle of packaging/bundle-cli.sh, whose bin/ holds an rsync too); empty when the command is
    // found on the remote PATH. A path under ~/ is given relative to the home (ssh starts there).
    QString remoteCliDir() const;
    // rsync's --rsync-path for the far side: its own rsync when its PATH has one, else the rsync
    // beside the remote autokernel-cli, so a server with only the bundle needs nothing installed.
    // Empty when remoteCliDir() is (the CLI is on the PATH, and so is the bundle's rsync).
    QString remoteRsync() const;

    // ssh and every option, without the host: rsync's -e.
    QStringList transport() const;
    // Whether transport() set up the connection sharing itself (the user's words did not).
    bool sharesConnection() const;
    // `ssh -O CMD host` for the shared connection: "stop" lets it end with its last session.
    QStringList controlCommand(const QString &command) const;
    // The full command (program first) that runs `remoteWords` on the host.
    QStringList command(const QStringList &remoteWords) const;
    // The full command that runs `autokernel-cli ARGS` there.
    QStringList cliCommand(const QStringList &args) const;

    // Where this run is mirrored on this machine: under $XDG_CACHE_HOME/autokernel/mirror, one folder
    // per URL.
    QString cacheDir() const;

private:
    QString m_host;
    int m_port = 0;
    QString m_path;
    QStringList m_ssh;
    QStringList m_cli;
};

} // namespace ak
