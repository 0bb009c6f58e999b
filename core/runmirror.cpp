#include "runmirror.h"

#include "corelog.h"
#include "runlock.h"
#include "shellwords.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QSignalBlocker>

namespace ak {

namespace {

// Exit code of the lister when the run directory is not there.
constexpr int NoRunDirectory = 3;
// rsync: "some files vanished before they could be transferred" — a file the writer replaced.
constexpr int RsyncVanished = 24;

// The lister (see runmirror.h): POSIX sh, date, find and sleep, nothing else on the server. A file
// changed after `date` ran is newer than the round's time, so rounds overlap by one second only.
const char *const kListerScript = R"(cd %1 || exit 3
s=$(date +%s); echo "#start $s"
while :; do
  sleep 0.5
  n=$(date +%s); t=$((s-1))
  find . -path ./.git/objects -prune -o -type f -newermt "@$t" -print
  find .git/objects -mindepth 1 -maxdepth 1 -type d -newermt "@$t" -exec find {} -type f -newermt "@$t" \;
  if [ -e .git/autokernel.lock ]; then echo "#lock"; else echo "#nolock"; fi
  echo "#end $n"
  s=$n
done)";

} // namespace

RunMirror::RunMirror(const RemoteRun &run, QObject *parent)
    : QObject(parent)
    , m_run(run)
    , m_local(run.cacheDir())
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &RunMirror::restart);
    connect(&m_lister, &QProcess::readyReadStandardOutput, this, &RunMirror::listerOutput);
    connect(&m_lister, &QProcess::finished, this, &RunMirror::listerEnded);
    connect(&m_lister, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            listerEnded();
    });
    connect(&m_rsync, &QProcess::finished, this, &RunMirror::transferFinished);
    connect(&m_rsync, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            transferFinished(-1, QProcess::CrashExit);
    });
}

RunMirror::~RunMirror()
{
    stop();
}

QStringList RunMirror::fullCommand() const
{
    // The remote path ends in / so rsync copies its contents, not the folder itself. The lock comes
    // along on purpose (who writes the run); local readers never take it.
    QStringList cmd { QStringLiteral("rsync"), QStringLiteral("-a"), QStringLiteral("--delete"),
        QStringLiteral("--delay-updates"), QStringLiteral("--itemize-changes"), QStringLiteral("-e"),
        shellwords::join(m_run.transport()) };
    // A server with only the bundle of packaging/bundle-cli.sh has rsync beside its autokernel-cli.
    if (const QString far = m_run.remoteRsync(); !far.isEmpty())
        cmd << QStringLiteral("--rsync-path=") + far;
    return cmd << QStringLiteral("%1:%2/").arg(m_run.host(), m_run.path()) << m_local + QLatin1Char('/');
}

QStringList RunMirror::listerCommand() const
{
    return m_run.command({ QStringLiteral("sh"), QStringLiteral("-c"),
        QString::fromLatin1(kListerScript).arg(shellwords::quote(m_run.path())) });
}

QStringList RunMirror::fetchCommand() const
{
    QStringList cmd = fullCommand();
    cmd.removeAll(QStringLiteral("--delete"));
    // The names, one per line, on stdin; a listed file the writer replaced or removed since (a
    // temporary object, a lock) is no error.
    cmd.insert(1, QStringLiteral("--files-from=-"));
    cmd.insert(2, QStringLiteral("--ignore-missing-args"));
    return cmd;
}

void RunMirror::start()
{
    if (m_running)
        return;
    m_running = true;
    if (!QDir().mkpath(m_local)) {
        m_running = false;
        m_lastError = QStringLiteral("cannot create the local mirror folder %1").arg(m_local);
        Q_EMIT failed(m_lastError, true);
        return;
    }
    restart();
}

void RunMirror::stop()
{
    const bool wasRunning = m_running;
    m_running = false;
    m_retry.stop();
    for (QProcess *p : { &m_lister, &m_rsync }) {
        const QSignalBlocker quiet(p);
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(2000);
        }
    }
    // The shared connection stops taking new sessions and ends with its last one, instead of
    // lingering for ControlPersist (a user's own ControlPath is left alone).
    if (wasRunning && m_run.sharesConnection()) {
        const QStringList cmd = m_run.controlCommand(QStringLiteral("stop"));
        QProcess control; // a local socket request: milliseconds
        control.start(cmd.first(), cmd.mid(1));
        if (!control.waitForFinished(2000))
            control.kill();
    }
}

void RunMirror::restart()
{
    if (!m_running)
        return;
    for (QProcess *p : { &m_lister, &m_rsync }) {
        const QSignalBlocker quiet(p);
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(2000);
        }
    }
    m_listerBuffer.clear();
    m_round.clear();
    m_pending.clear();
    m_fullPending = true; // after the lister's #start: changes from then on are listed
    m_fullRunning = false;
    const QStringList cmd = listerCommand();
    m_lister.start(cmd.first(), cmd.mid(1));
}

void RunMirror::listerOutput()
{
    m_listerBuffer += m_lister.readAllStandardOutput();
    int eol;
    bool roundEnded = false;
    while ((eol = int(m_listerBuffer.indexOf('\n'))) >= 0) {
        QString line = QString::fromUtf8(m_listerBuffer.left(eol));
        m_listerBuffer.remove(0, eol + 1);
        if (line.startsWith(QLatin1String("#start"))) {
            fetchNext(); // the whole copy
        } else if (line == QLatin1String("#lock") || line == QLatin1String("#nolock")) {
            m_remoteLock = line == QLatin1String("#lock");
        } else if (line.startsWith(QLatin1String("#end"))) {
            m_pending.unite(m_round);
            m_round.clear();
            roundEnded = true;
        } else if (!line.isEmpty()) {
            if (line.startsWith(QLatin1String("./")))
                line.remove(0, 2);
            m_round.insert(line);
        }
    }
    if (roundEnded)
        fetchNext();
}

void RunMirror::fetchNext()
{
    if (!m_running || m_rsync.state() != QProcess::NotRunning)
        return;
    if (m_fullPending) {
        m_fullPending = false;
        m_fullRunning = true;
        m_clock.start();
        const QStringList cmd = fullCommand();
        m_rsync.start(cmd.first(), cmd.mid(1));
        return;
    }
    if (m_passes == 0)
        return; // the first copy has not finished: what it missed is fetched after it
    // The writer stopped: its lock is gone there, so it goes here too (the window says who writes).
    const QString lock = RunLock::lockPath(m_local);
    if (!m_remoteLock && QFile::exists(lock)) {
        QFile::remove(lock);
        Q_EMIT synced(false, true);
    }
    if (m_pending.isEmpty())
        return;
    QByteArray names;
    for (const QString &name : std::as_const(m_pending))
        names += name.toUtf8() + '\n';
    m_pending.clear();
    m_clock.start();
    const QStringList cmd = fetchCommand();
    m_rsync.start(cmd.first(), cmd.mid(1));
    m_rsync.write(names);
    m_rsync.closeWriteChannel();
}

void RunMirror::transferFinished(int exitCode, QProcess::ExitStatus status)
{
    const QString err = QString::fromLocal8Bit(m_rsync.readAllStandardError()).trimmed();
    const bool changed = !m_rsync.readAllStandardOutput().trimmed().isEmpty(); // --itemize-changes
    if (!m_running)
        return;
    const bool full = m_fullRunning;
    m_fullRunning = false;
    if (status != QProcess::NormalExit || (exitCode != 0 && exitCode != RsyncVanished)) {
        fail(describe(m_rsync, status == QProcess::NormalExit ? exitCode : -1, err));
        return;
    }
    m_lastPassMs = m_clock.elapsed();
    const bool first = full && m_passes == 0;
    ++m_passes;
    m_failures = 0;
    m_lastError.clear();
    Q_EMIT synced(first, changed || full);
    fetchNext();
}

void RunMirror::listerEnded()
{
    if (!m_running)
        return;
    const int code
        = m_lister.exitStatus() == QProcess::NormalExit && m_lister.error() != QProcess::FailedToStart
        ? m_lister.exitCode()
        : -1;
    fail(describe(m_lister, code, QString::fromLocal8Bit(m_lister.readAllStandardError()).trimmed()));
}

void RunMirror::fail(const QString &error)
{
    ++m_failures;
    m_lastError = error;
    qCWarning(lcCore) << "mirror of" << m_run.url() << "failed:" << error;
    for (QProcess *p : { &m_lister, &m_rsync }) {
        const QSignalBlocker quiet(p); // their end is this failure, not another one
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(2000);
        }
    }
    m_fullRunning = false;
    m_retry.setInterval(qMin(MaxRetryMs, 500 << qMin(m_failures, 6)));
    m_retry.start();
    Q_EMIT failed(error, m_passes == 0);
}

QString RunMirror::describe(const QProcess &p, int exitCode, const QString &stderrText) const
{
    const QString where = m_run.display();
    const QString tail = stderrText.section(QLatin1Char('\n'), -3).simplified();
    if (exitCode == -1 && p.error() == QProcess::FailedToStart)
        return QStringLiteral("%1 could not be started (Debian's rsync and openssh-client are needed on this "
                              "machine): %2")
            .arg(p.program(), p.errorString());
    if (exitCode == 255)
        return QStringLiteral("ssh to %1 failed or dropped: %2").arg(m_run.host(), tail);
    if ((&p == &m_lister && exitCode == NoRunDirectory)
        || (exitCode == 23 && stderrText.contains(QLatin1String("No such file or directory"))))
        return QStringLiteral("there is no run directory at %1").arg(where);
    // The remote shell's "exec: …/rsync: not found" ends rsync's connection before its exit code 127
    // can reach us: then rsync itself exits 12 (protocol stream) with that text on stderr. Which of the
    // two arrives depends on timing, so the text decides too.
    static const QRegularExpression execNotFound(QStringLiteral("exec: [^\n]*: not found"));
    if (exitCode == 127 || stderrText.contains(QLatin1String("command not found"))
        || stderrText.contains(execNotFound))
        return QStringLiteral("a command is missing on %1 (rsync? install it there, or name the "
                              "autokernel-cli of a bundle, which has one beside it): %2")
            .arg(m_run.host(), tail);
    if (exitCode == -1)
        return QStringLiteral("%1 for %2 was killed").arg(p.program(), where);
    if (&p == &m_lister)
        return QStringLiteral("the change lister on %1 ended (exit %2): %3")
            .arg(m_run.host())
            .arg(exitCode)
            .arg(tail);
    return QStringLiteral("rsync of %1 failed (exit %2): %3").arg(where).arg(exitCode).arg(tail);
}

} // namespace ak
