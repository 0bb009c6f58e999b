#include "workerlauncher.h"

#include "shellwords.h"

#include <QFileInfo>

#include <nlohmann/json.hpp>

namespace ak {

namespace {

// Read by the harness on the remote side (docs/remote.md): device pinning and test switches. Paths
// of this machine (AUTOKERNEL_BWRAP, AUTOKERNEL_PYTHON) mean nothing there and are not sent.
const char *const kForwarded[] = { "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
    "AK_WORKER_TEST", "AUTOKERNEL_SPARE_RUNNER", "AUTOKERNEL_TIMING_SPIN", "AUTOKERNEL_SANDBOX_MEMORY_MB",
    "AUTOKERNEL_SANDBOX_PIDS", "AUTOKERNEL_SANDBOX_SCRATCH_MB", "AUTOKERNEL_CGROUP" };

} // namespace

WorkerLauncher::WorkerLauncher(const QStringList &prefix)
    : m_prefix(prefix)
{ }

WorkerLauncher WorkerLauncher::parse(const QString &text, QString *error)
{
    QChar unclosed;
    const QStringList words = shellwords::split(text, &unclosed);
    if (!unclosed.isNull()) {
        if (error)
            *error = QStringLiteral("the launcher has an unclosed %1 quote: %2").arg(QString(unclosed), text);
        return WorkerLauncher();
    }
    return WorkerLauncher(words);
}

bool WorkerLauncher::isSsh() const
{
    return !m_prefix.isEmpty() && QFileInfo(m_prefix.first()).fileName() == QLatin1String("ssh");
}

bool WorkerLauncher::isSrun() const
{
    return !m_prefix.isEmpty() && QFileInfo(m_prefix.first()).fileName() == QLatin1String("srun");
}

QString WorkerLauncher::text() const
{
    return shellwords::join(m_prefix);
}

QStringList WorkerLauncher::command(const QStringList &remoteWords) const
{
    if (isLocal())
        return remoteWords;
    QStringList out = m_prefix;
    if (!isSsh())
        return out + remoteWords;
    const QStringList options = sshDefaults(m_prefix);
    for (int i = int(options.size()) - 1; i >= 0; --i)
        out.insert(1, options.at(i));
    out << shellwords::join(remoteWords);
    return out;
}

bool WorkerLauncher::setsOption(const QStringList &sshWords, const QString &option)
{
    for (const QString &w : sshWords)
        if (w.contains(option, Qt::CaseInsensitive))
            return true;
    return false;
}

QStringList WorkerLauncher::sshDefaults(const QStringList &sshWords)
{
    QStringList options;
    if (!setsOption(sshWords, QStringLiteral("BatchMode")))
        options << QStringLiteral("-o") << QStringLiteral("BatchMode=yes");
    if (!setsOption(sshWords, QStringLiteral("ServerAlive")))
        options << QStringLiteral("-o") << QStringLiteral("ServerAliveInterval=15") << QStringLiteral("-o")
                << QStringLiteral("ServerAliveCountMax=4");
    return options;
}

QProcessEnvironment WorkerLauncher::localEnvironment(const QProcessEnvironment &workerEnv) const
{
    QProcessEnvironment env = workerEnv;
    const QString sock = QProcessEnvironment::systemEnvironment().value(QStringLiteral("SSH_AUTH_SOCK"));
    if (isSsh() && !sock.isEmpty())
        env.insert(QStringLiteral("SSH_AUTH_SOCK"), sock);
    return env;
}

QByteArray WorkerLauncher::forwardedEnvironment(const QProcessEnvironment &workerEnv)
{
    nlohmann::json env = nlohmann::json::object();
    for (const char *name : kForwarded)
        if (workerEnv.contains(QLatin1String(name)))
            env[name] = workerEnv.value(QLatin1String(name)).toStdString();
    return QByteArray::fromStdString(env.dump()).toBase64();
}

QString WorkerLauncher::describeExit(int exitCode, bool crashed) const
{
    if (isLocal())
        return crashed ? QStringLiteral("the worker process crashed (killed by a signal)")
                       : QStringLiteral("the worker process exited with code %1").arg(exitCode);
    const QString program = QFileInfo(m_prefix.first()).fileName();
    if (crashed)
        return QStringLiteral("the launcher '%1' was killed (signal): the remote worker is lost")
            .arg(program);
    if (isSsh() && exitCode == 255)
        return QStringLiteral("the ssh connection failed or dropped (ssh exited with 255)");
    if (isSrun())
        return QStringLiteral("the Slurm step ended with code %1 (cancelled, preempted or out of time?)")
            .arg(exitCode);
    return QStringLiteral("the remote worker ended with code %1 (through '%2')").arg(exitCode).arg(program);
}

} // namespace ak
