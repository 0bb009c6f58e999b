#include "sshserver.h"

#include "shellwords.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QThread>

#include <unistd.h>

namespace ak::test {

SshServer::~SshServer()
{
    if (m_sshd.state() != QProcess::NotRunning) {
        m_sshd.terminate();
        if (!m_sshd.waitForFinished(3000))
            m_sshd.kill();
        m_sshd.waitForFinished(3000);
    }
}

QString SshServer::sshdPath()
{
    return QFile::exists(QStringLiteral("/usr/sbin/sshd")) ? QStringLiteral("/usr/sbin/sshd") : QString();
}

QString SshServer::bwrapPath()
{
    return QStandardPaths::findExecutable(QStringLiteral("bwrap"));
}

QString SshServer::isolationProblem()
{
    // The same namespace the sessions get, over a folder made for the probe.
    QTemporaryDir probe;
    QProcess p;
    p.start(bwrapPath(),
        { QStringLiteral("--bind"), QStringLiteral("/"), QStringLiteral("/"), QStringLiteral("--dev-bind"),
            QStringLiteral("/dev"), QStringLiteral("/dev"), QStringLiteral("--tmpfs"), probe.path(),
            QStringLiteral("--die-with-parent"), QStringLiteral("true") });
    if (!p.waitForFinished(20000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return QStringLiteral("bwrap cannot make a mount namespace here (%1): %2")
            .arg(p.errorString(), QString::fromUtf8(p.readAllStandardError()).trimmed());
    return QString();
}

bool SshServer::run(const QString &program, const QStringList &args, QString *error)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *error = QStringLiteral("%1 %2 failed: %3")
                     .arg(program, args.join(QLatin1Char(' ')), QString::fromUtf8(p.readAllStandardError()));
        return false;
    }
    return true;
}

bool SshServer::start(QString *error)
{
    if (sshdPath().isEmpty()) {
        *error = QStringLiteral(
            "/usr/sbin/sshd is missing (Debian's openssh-server; packaging/setup-deps.sh installs it)");
        return false;
    }
    if (!m_dir.isValid()) {
        *error = QStringLiteral("no temporary directory");
        return false;
    }
    const QString d = m_dir.path();
    QDir().mkpath(farCache());
    QDir().mkpath(d + QStringLiteral("/far/tmp"));
    if (!run(QStringLiteral("ssh-keygen"),
            { QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                QString(), QStringLiteral("-f"), d + QStringLiteral("/host_key") },
            error)
        || !run(QStringLiteral("ssh-keygen"),
            { QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                QString(), QStringLiteral("-f"), d + QStringLiteral("/user_key") },
            error))
        return false;
    QFile::copy(d + QStringLiteral("/user_key.pub"), d + QStringLiteral("/authorized_keys"));
    {
        QTcpServer probe; // a free port: bound, read, released
        if (!probe.listen(QHostAddress::LocalHost, 0)) {
            *error = QStringLiteral("no free loopback port");
            return false;
        }
        m_port = probe.serverPort();
    }
    QString sessionSetup;
    if (!m_farPath.isEmpty())
        sessionSetup += QStringLiteral(" PATH=") + m_farPath;
    for (const QString &dir : std::as_const(m_hidden))
        if (QString(d + QLatin1Char('/')).startsWith(QDir(dir).absolutePath() + QLatin1Char('/'))) {
            *error = QStringLiteral("%1 would hide the far side's own folder %2").arg(dir, d);
            return false;
        }
    if (!m_hidden.isEmpty()) {
        // sshd runs the forced command with the user's shell; the session's own command is then
        // run by that shell again, inside the namespace, as sshd would have run it.
        QString script = QStringLiteral("#!/bin/sh\n# Each session of the test's sshd, with the "
                                        "coordinator's folders hidden (sshserver.h).\nexec %1 --bind / / "
                                        "--dev-bind /dev /dev")
                             .arg(shellwords::quote(bwrapPath()));
        for (const QString &dir : std::as_const(m_hidden))
            script += QStringLiteral(" --tmpfs ") + shellwords::quote(dir);
        script += QStringLiteral(" --die-with-parent \"${SHELL:-/bin/sh}\" -c \"$SSH_ORIGINAL_COMMAND\"\n");
        QFile wrapper(d + QStringLiteral("/far-session"));
        if (!wrapper.open(QIODevice::WriteOnly) || wrapper.write(script.toUtf8()) < 0) {
            *error = wrapper.errorString();
            return false;
        }
        wrapper.close();
        wrapper.setPermissions(wrapper.permissions() | QFileDevice::ExeOwner);
        sessionSetup += QStringLiteral("\nForceCommand ") + wrapper.fileName();
    }
    QFile config(d + QStringLiteral("/sshd_config"));
    if (!config.open(QIODevice::WriteOnly)) {
        *error = config.errorString();
        return false;
    }
    config.write(QStringLiteral(
        "Port %1\nListenAddress 127.0.0.1\nHostKey %2/host_key\nAuthorizedKeysFile "
        "%2/authorized_keys\nPidFile %2/sshd.pid\nUsePAM no\nStrictModes no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nLogLevel ERROR\nSetEnv XDG_CACHE_HOME=%3 TMPDIR=%2/far/tmp%4\n")
                     .arg(m_port)
                     .arg(d, farCache(), sessionSetup)
                     .toUtf8());
    config.close();
    if (::geteuid() == 0)
        QDir().mkpath(QStringLiteral("/run/sshd")); // privilege separation, when started as root
    m_sshd.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_sshd.start(
        sshdPath(), { QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"), config.fileName() });
    if (!m_sshd.waitForStarted(5000)) {
        *error = QStringLiteral("sshd did not start: ") + m_sshd.errorString();
        return false;
    }
    // Ready when a session runs.
    QElapsedTimer clock;
    clock.start();
    QString last;
    while (clock.elapsed() < 20000) {
        QStringList args = launcher().split(QLatin1Char(' ')).mid(1);
        args << QStringLiteral("true");
        if (run(QStringLiteral("ssh"), args, &last))
            return true;
        if (m_sshd.state() == QProcess::NotRunning)
            break;
        QThread::msleep(200);
    }
    *error = QStringLiteral("sshd on port %1 does not accept sessions: %2").arg(m_port).arg(last);
    return false;
}

QString SshServer::launcher() const
{
    return QStringLiteral(
        "ssh -p %1 -i %2/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
        "-o LogLevel=ERROR -o BatchMode=yes 127.0.0.1")
        .arg(m_port)
        .arg(m_dir.path());
}

QString SshServer::farDir() const
{
    return m_dir.path() + QStringLiteral("/far");
}

QString SshServer::farCache() const
{
    return farDir() + QStringLiteral("/cache");
}

int SshServer::runThere(const QString &command, QString *output) const
{
    QStringList args = launcher().split(QLatin1Char(' ')).mid(1);
    args << command;
    QProcess p;
    p.start(QStringLiteral("ssh"), args);
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished();
    }
    if (output)
        *output = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : 255;
}

} // namespace ak::test
