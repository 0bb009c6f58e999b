#include "remoterun.h"

#include "shellwords.h"
#include "workerlauncher.h"

#include <QCryptographicHash>
#include <QDir>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QUrl>

namespace ak {

namespace {

QStringList wordsFromEnv(const char *name, const QString &fallback)
{
    const QString text = QProcessEnvironment::systemEnvironment().value(QLatin1String(name));
    QChar unclosed;
    const QStringList words = shellwords::split(text, &unclosed);
    return words.isEmpty() || !unclosed.isNull() ? QStringList { fallback } : words;
}

} // namespace

bool RemoteRun::isRemote(const QString &text)
{
    return text.startsWith(QLatin1String("ssh://"), Qt::CaseInsensitive);
}

RemoteRun RemoteRun::parse(const QString &text, QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(text, why);
        return RemoteRun();
    };
    if (!isRemote(text))
        return fail(QStringLiteral("not an ssh:// address (ssh://[user@]host[:port]/path/to/run)"));
    const QUrl url(text, QUrl::TolerantMode);
    if (!url.isValid())
        return fail(url.errorString());
    if (url.host().isEmpty())
        return fail(QStringLiteral("no host (ssh://[user@]host[:port]/path/to/run)"));
    QString path = url.path(QUrl::FullyDecoded);
    if (path.startsWith(QLatin1String("/~/")))
        path = path.mid(3); // ssh starts in the remote home: a relative path is relative to it
    while (path.size() > 1 && path.endsWith(QLatin1Char('/')))
        path.chop(1);
    if (path.isEmpty() || path == QLatin1String("/") || path == QLatin1String("/~"))
        return fail(QStringLiteral("no run directory path after the host"));
    RemoteRun run;
    run.m_host = url.userName().isEmpty() ? url.host() : url.userName() + QLatin1Char('@') + url.host();
    run.m_port = url.port(0);
    run.m_path = path;
    run.m_ssh = wordsFromEnv("AUTOKERNEL_SSH", QStringLiteral("ssh"));
    run.m_cli = wordsFromEnv("AUTOKERNEL_REMOTE_CLI", QStringLiteral("autokernel-cli"));
    return run;
}

QString RemoteRun::url() const
{
    QString out = QStringLiteral("ssh://") + m_host;
    if (m_port > 0)
        out += QLatin1Char(':') + QString::number(m_port);
    return out + (m_path.startsWith(QLatin1Char('/')) ? m_path : QStringLiteral("/~/") + m_path);
}

QString RemoteRun::display() const
{
    return m_host + QLatin1Char(':') + m_path;
}

QString RemoteRun::remoteCliDir() const
{
    // The program word: after `env`, its options and VAR=value assignments.
    static const QRegularExpression assignment(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*="));
    QString program;
    for (int i = 0; i < m_cli.size() && program.isEmpty(); ++i) {
        const QString &word = m_cli.at(i);
        const bool isEnv = i == 0 && (word == QLatin1String("env") || word.endsWith(QLatin1String("/env")));
        if (!isEnv && !word.startsWith(QLatin1Char('-')) && !assignment.match(word).hasMatch())
            program = word;
    }
    const int slash = int(program.lastIndexOf(QLatin1Char('/')));
    if (slash < 0)
        return QString();
    QString dir = slash == 0 ? QStringLiteral("/") : program.left(slash);
    // A quoted ~ would not expand there; the remote commands start in the home anyway.
    if (dir == QLatin1String("~"))
        return QStringLiteral(".");
    if (dir.startsWith(QLatin1String("~/")))
        dir.remove(0, 2);
    return dir;
}

QString RemoteRun::remoteRsync() const
{
    const QString dir = remoteCliDir();
    if (dir.isEmpty())
        return QString();
    // Run by the far side's login shell with rsync's own arguments after it: `sh -c` so the choice
    // is made by a POSIX shell whatever the login shell is, and "$@" passes those arguments on as the
    // login shell split them. A missing fallback fails as `exec: …: not found` (exit 127), which the
    // mirror reports as a missing command.
    const QString fallback = dir + QLatin1String(dir.endsWith(QLatin1Char('/')) ? "rsync" : "/rsync");
    const QString script
        = QStringLiteral("exec \"$(command -v rsync || echo %1)\" \"$@\"").arg(shellwords::quote(fallback));
    return shellwords::join({ QStringLiteral("sh"), QStringLiteral("-c"), script, QStringLiteral("rsync") });
}

QStringList RemoteRun::transport() const
{
    QStringList words = m_ssh.isEmpty() ? QStringList { QStringLiteral("ssh") } : m_ssh;
    QStringList options = WorkerLauncher::sshDefaults(words);
    if (sharesConnection())
        options << QStringLiteral("-o") << QStringLiteral("ControlMaster=auto") << QStringLiteral("-o")
                << QStringLiteral("ControlPath=%1/ak-ssh-%C").arg(QDir::tempPath()) << QStringLiteral("-o")
                << QStringLiteral("ControlPersist=60");
    if (m_port > 0)
        options << QStringLiteral("-p") << QString::number(m_port);
    return words + options;
}

bool RemoteRun::sharesConnection() const
{
    return !WorkerLauncher::setsOption(m_ssh, QStringLiteral("ControlMaster"))
        && !WorkerLauncher::setsOption(m_ssh, QStringLiteral("ControlPath"));
}

QStringList RemoteRun::controlCommand(const QString &command) const
{
    return transport() << QStringLiteral("-O") << command << m_host;
}

QStringList RemoteRun::command(const QStringList &remoteWords) const
{
    return transport() << m_host << shellwords::join(remoteWords);
}

QStringList RemoteRun::cliCommand(const QStringList &args) const
{
    return command(m_cli + args);
}

QString RemoteRun::cacheDir() const
{
    const QString base = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation);
    const QByteArray hash
        = QCryptographicHash::hash(url().toUtf8(), QCryptographicHash::Sha1).toHex().left(12);
    QString host = m_host;
    host.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
    return QDir(base).filePath(
        QStringLiteral("autokernel/mirror/%1-%2").arg(host, QString::fromLatin1(hash)));
}

} // namespace ak
