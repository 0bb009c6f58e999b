#include "services/remotecontrol.h"

#include "runlock.h"
#include "shellwords.h"

#include <QLockFile>
#include <QRegularExpression>

namespace ak {

RemoteControl::RemoteControl(const RemoteRun &run, const QString &mirrorDir, QObject *parent)
    : LoopControl(parent)
    , m_run(run)
    , m_mirror(mirrorDir)
{
    connect(&m_process, &QProcess::finished, this, &RemoteControl::finished);
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            finished(-1, QProcess::CrashExit);
    });
}

RemoteControl::~RemoteControl()
{
    m_queue.clear();
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(2000);
    }
}

QString RemoteControl::description() const
{
    return QStringLiteral("the remote run %1 (over ssh)").arg(m_run.display());
}

QString RemoteControl::writer() const
{
    // The mirrored lock file: QLockFile reads it without taking it. Its pid lives on the remote host,
    // so it is reported, never checked here; the remote writer clears a stale one when it starts.
    qint64 pid = 0;
    QString host;
    QString app;
    QLockFile lock(RunLock::lockPath(m_mirror));
    if (!lock.getLockInfo(&pid, &host, &app) || pid <= 0)
        return QString();
    return QStringLiteral("on %1 (pid %2)").arg(host.isEmpty() ? m_run.host() : host).arg(pid);
}

void RemoteControl::notHere(const QString &action)
{
    Q_EMIT actionFailed(action,
        QStringLiteral("the loop of a remote run starts and stops on that machine (ssh %1 %2 run %3; "
                       "Ctrl-C there); from here you can pin, skip, revert, accept, reject, change the "
                       "move-on rules and switch review mode")
            .arg(m_run.host(), shellwords::join(m_run.remoteCli()), shellwords::quote(m_run.path())));
}

void RemoteControl::start()
{
    notHere(QStringLiteral("start"));
}
void RemoteControl::pause()
{
    notHere(QStringLiteral("pause"));
}
void RemoteControl::resume()
{
    notHere(QStringLiteral("resume"));
}
void RemoteControl::stop()
{
    notHere(QStringLiteral("stop"));
}

void RemoteControl::pin(const QString &kernel)
{
    enqueue(QStringLiteral("pin"), { kernel });
}
void RemoteControl::unpin(const QString &kernel)
{
    enqueue(QStringLiteral("unpin"), { kernel });
}
void RemoteControl::skip(const QString &kernel)
{
    enqueue(QStringLiteral("skip"), { kernel });
}
void RemoteControl::revert(const QString &kernel, int experimentId)
{
    enqueue(QStringLiteral("revert"), { kernel, QString::number(experimentId) });
}
void RemoteControl::accept(int experimentId)
{
    enqueue(QStringLiteral("accept"), { QString::number(experimentId) });
}
void RemoteControl::reject(int experimentId)
{
    enqueue(QStringLiteral("reject"), { QString::number(experimentId) });
}

void RemoteControl::setMoveOnRules(const MoveOnRules &rules)
{
    enqueue(QStringLiteral("setMoveOnRules"),
        { QStringLiteral("--max-consecutive-reverts"), QString::number(rules.maxConsecutiveReverts),
            QStringLiteral("--roof-pct"), QString::number(rules.roofPct, 'g', 10),
            QStringLiteral("--hours-per-kernel"), QString::number(rules.hoursPerKernel, 'g', 10),
            QStringLiteral("--speedup-over-baseline"), QString::number(rules.speedupOverBaseline, 'g', 10),
            QStringLiteral("--max-in-model-misses"), QString::number(rules.maxInModelMisses) });
}

void RemoteControl::setReviewMode(bool on)
{
    enqueue(QStringLiteral("setReviewMode"), { on ? QStringLiteral("on") : QStringLiteral("off") });
}

QStringList RemoteControl::cliArgs(const QString &action, const QStringList &args) const
{
    // The LoopControl call's name is the subcommand's, but for the two that are named differently.
    QString command = action;
    if (action == QLatin1String("setMoveOnRules"))
        command = QStringLiteral("rules");
    else if (action == QLatin1String("setReviewMode"))
        command = QStringLiteral("review");
    return QStringList { command, m_run.path() } + args;
}

void RemoteControl::enqueue(const QString &name, const QStringList &args)
{
    m_queue.push_back({ name, cliArgs(name, args) });
    if (m_queue.size() == 1)
        runNext();
}

void RemoteControl::runNext()
{
    if (m_queue.empty()) {
        Q_EMIT idle();
        return;
    }
    const QStringList cmd = m_run.cliCommand(m_queue.front().args);
    m_process.start(cmd.first(), cmd.mid(1));
}

void RemoteControl::finished(int exitCode, QProcess::ExitStatus status)
{
    if (m_queue.empty())
        return;
    const Request request = m_queue.front();
    m_queue.pop_front();
    const QString out = QString::fromLocal8Bit(m_process.readAllStandardOutput()).trimmed();
    const QString err = QString::fromLocal8Bit(m_process.readAllStandardError()).trimmed();
    auto lastLine = [](const QString &text) { return text.section(QLatin1Char('\n'), -1).trimmed(); };
    if (status == QProcess::NormalExit && exitCode == 0) {
        Q_EMIT actionFinished(request.name, lastLine(out).isEmpty() ? QStringLiteral("done") : lastLine(out));
    } else if (exitCode == -1 && m_process.error() == QProcess::FailedToStart) {
        Q_EMIT actionFailed(request.name,
            QStringLiteral("%1 could not be started: %2")
                .arg(m_run.transport().first(), m_process.errorString()));
    } else if (exitCode == 255) {
        Q_EMIT actionFailed(request.name,
            QStringLiteral("ssh to %1 failed or dropped; nothing was sent: %2")
                .arg(m_run.host(), lastLine(err)));
    } else if (exitCode == 127) {
        Q_EMIT actionFailed(request.name,
            QStringLiteral("'%1' is not found on %2: set the remote command (File ▸ Open Remote Run…, or "
                           "AUTOKERNEL_REMOTE_CLI)")
                .arg(shellwords::join(m_run.remoteCli()), m_run.host()));
    } else {
        // The remote CLI's own error: "autokernel-cli: reject: experiment 18 is reject, not pending".
        QString why = lastLine(err).isEmpty() ? lastLine(out) : lastLine(err);
        why.remove(QRegularExpression(QStringLiteral("^autokernel-cli: ")));
        Q_EMIT actionFailed(request.name,
            why.isEmpty() ? QStringLiteral("failed on %1 (exit %2)").arg(m_run.host()).arg(exitCode) : why);
    }
    runNext();
}

} // namespace ak
