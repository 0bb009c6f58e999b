#pragma once

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

namespace ak::test {

// A private sshd on a loopback port, started from Debian's openssh-server with keys made for it: the
// far side of `--launcher 'ssh …'` in the remote tests. It runs as the current user (root in CI)
// and accepts only the key it made; sessions get XDG_CACHE_HOME and TMPDIR of their own, so nothing
// the local side caches is found there by accident.
class SshServer
{
public:
    SshServer() = default;
    ~SshServer();
    SshServer(const SshServer &) = delete;
    SshServer &operator=(const SshServer &) = delete;

    static QString sshdPath(); // empty when openssh-server is not installed

    bool start(QString *error);
    // The launcher words: ssh with this server's port, key and a throw-away known-hosts file.
    QString launcher() const;
    QString farCache() const; // the sessions' XDG_CACHE_HOME

private:
    bool run(const QString &program, const QStringList &args, QString *error);

    QTemporaryDir m_dir;
    QProcess m_sshd;
    int m_port = 0;
};

} // namespace ak::test
