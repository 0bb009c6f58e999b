#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace ak::test {

// A private sshd on a loopback port, started from Debian's openssh-server with keys made for it: the
// far side of `--launcher 'ssh …'` in the remote tests. It runs as the current user (root in CI)
// and accepts only the key it made; sessions get XDG_CACHE_HOME and TMPDIR of their own, so nothing
// the local side caches is found there by accident. Sessions can also be made to see less, as on
// another machine: a PATH of their own, and folders of the coordinator hidden (bubblewrap).
class SshServer
{
public:
    SshServer() = default;
    ~SshServer();
    SshServer(const SshServer &) = delete;
    SshServer &operator=(const SshServer &) = delete;

    static QString sshdPath(); // empty when openssh-server is not installed
    static QString bwrapPath(); // empty when bubblewrap is not installed
    // Empty when bwrap can hide a folder from a session here; else why not (e.g. the kernel refuses
    // the namespaces it needs). Assumes bwrapPath() is not empty.
    static QString isolationProblem();

    // Before start(): the sessions' PATH (else sshd's default).
    void setFarPath(const QString &path) { m_farPath = path; }
    // Before start(): every session runs in a bubblewrap mount namespace where these folders are
    // empty (a tmpfs over each), the rest of the machine as it is, so a far side that reads the
    // coordinator's files fails as it would on another machine. Needs isolationProblem() empty.
    void hideFromFarSide(const QStringList &dirs) { m_hidden = dirs; }

    bool start(QString *error);
    // The launcher words: ssh with this server's port, key and a throw-away known-hosts file.
    QString launcher() const;
    QString farDir() const; // the far side's own folder, never hidden (its cache and TMPDIR are in it)
    QString farCache() const; // the sessions' XDG_CACHE_HOME
    // Runs `command` in a session there; its exit code (255: ssh failed), stdout and stderr in *output.
    int runThere(const QString &command, QString *output = nullptr) const;

private:
    bool run(const QString &program, const QStringList &args, QString *error);

    QTemporaryDir m_dir;
    QProcess m_sshd;
    int m_port = 0;
    QString m_farPath;
    QStringList m_hidden;
};

} // namespace ak::test
