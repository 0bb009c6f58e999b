#include "agents/commandagent.h"
#include "shellwords.h"

#include "agents/contextprompt.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

#include <signal.h>
#include <unistd.h>

namespace ak {
namespace {

constexpr qint64 kMaxOutputKept = 64 * 1024;

QString readText(const QString &path, qint64 maxBytes = -1)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QString();
    if (maxBytes > 0 && f.size() > maxBytes)
        f.seek(f.size() - maxBytes); // the tail is where errors are
    return QString::fromUtf8(f.readAll());
}

QString firstLine(const QString &text)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (const QString &line : lines) {
        const QString t = line.trimmed();
        if (!t.isEmpty())
            return t.left(200);
    }
    return QString();
}

QString lastLine(const QString &text)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        const QString t = it->trimmed();
        if (!t.isEmpty())
            return t.left(300);
    }
    return QString();
}

bool writeFile(const QString &path, const QString &text)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text.toUtf8()) >= 0 && f.flush();
}

// Copies the kernel folder's files (references, notes) so the external tool sees what a person would.
bool copyTree(const QString &from, const QString &to, QString *error)
{
    if (from.isEmpty() || !QFileInfo(from).isDir())
        return true;
    const QDir source(from);
    QDirIterator it(from, QDir::Files | QDir::NoDotAndDotDot | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString rel = source.relativeFilePath(path);
        if (rel.contains(QLatin1String("__pycache__")))
            continue;
        const QString target = to + QLatin1Char('/') + rel;
        QDir().mkpath(QFileInfo(target).absolutePath());
        if (!QFile::copy(path, target)) {
            *error = QStringLiteral("cannot copy %1 into the scratch folder").arg(path);
            return false;
        }
    }
    return true;
}

void killGroup(QProcess *p)
{
    const qint64 pid = p->processId();
    if (pid > 0)
        ::kill(-pid_t(pid), SIGKILL);
    p->kill();
    p->waitForFinished(5000);
}

// Where things go in a proposal's scratch folder: the tool works in workDir, on a copy.
struct ScratchPaths
{
    explicit ScratchPaths(const QTemporaryDir &scratch)
        : root(scratch.path())
        , workDir(scratch.filePath(QStringLiteral("work")))
        , promptFile(scratch.filePath(QStringLiteral("prompt.md")))
        , kernelFile(workDir + QStringLiteral("/kernel.py"))
        , outFile(scratch.filePath(QStringLiteral("stdout.txt")))
        , errFile(scratch.filePath(QStringLiteral("stderr.txt")))
    { }
    QString root;
    QString workDir;
    QString promptFile;
    QString kernelFile;
    QString outFile;
    QString errFile;
};

// The kernel folder's copy, its kernel.py and the prompt, as the tool will find them; a stale
// DESCRIPTION copied from the kernel folder is removed so that only the tool's own counts.
bool prepareScratch(const ScratchPaths &paths, const AgentContext &context, QString *error)
{
    if (!QDir().mkpath(paths.workDir) || !copyTree(context.kernelDir, paths.workDir, error)) {
        if (error->isEmpty())
            *error = QStringLiteral("cannot prepare the scratch folder");
        return false;
    }
    QFile::remove(paths.workDir + QStringLiteral("/DESCRIPTION"));
    QString prompt = context.systemPrompt;
    if (!prompt.isEmpty() && !context.prompt.isEmpty())
        prompt += QStringLiteral("\n\n");
    prompt += context.prompt.isEmpty() ? ContextPrompt::render(context) : context.prompt;
    if (!writeFile(paths.kernelFile, context.kernelPy) || !writeFile(paths.promptFile, prompt)) {
        *error = QStringLiteral("cannot write into the scratch folder %1").arg(paths.root);
        return false;
    }
    return true;
}

void setUp(QProcess *process, const QStringList &args, const ScratchPaths &paths)
{
    process->setProgram(args.first());
    process->setArguments(args.mid(1));
    process->setWorkingDirectory(paths.workDir);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("AUTOKERNEL_PROMPT_FILE"), paths.promptFile);
    env.insert(QStringLiteral("AUTOKERNEL_WORKDIR"), paths.workDir);
    env.insert(QStringLiteral("AUTOKERNEL_KERNEL_FILE"), paths.kernelFile);
    process->setProcessEnvironment(env);
    process->setStandardInputFile(QProcess::nullDevice());
    // Files, not pipes: a chatty tool cannot fill a pipe and stall, and nothing is held in memory.
    process->setStandardOutputFile(paths.outFile);
    process->setStandardErrorFile(paths.errFile);
    // Its own process group, so that stop/timeout also ends whatever the tool spawned.
    process->setChildProcessModifier([] { ::setpgid(0, 0); });
}

// Why a finished command failed (a crash or a non-zero exit, with its stderr's last line); empty
// when it exited 0.
QString exitProblem(const QProcess &process, const QString &errFile)
{
    if (process.exitStatus() == QProcess::CrashExit)
        return QStringLiteral("the command crashed: %1").arg(lastLine(readText(errFile, kMaxOutputKept)));
    if (process.exitCode() != 0) {
        const QString why = lastLine(readText(errFile, kMaxOutputKept));
        return QStringLiteral("the command exited with code %1%2")
            .arg(process.exitCode())
            .arg(why.isEmpty() ? QString() : QStringLiteral(": ") + why);
    }
    return QString();
}

// The description: the tool's DESCRIPTION file, else its first output line, else its name.
AgentProposal proposalFrom(
    const QString &kernelPy, const ScratchPaths &paths, const QString &program, const QString &out)
{
    AgentProposal p;
    p.kernelPy = kernelPy;
    p.description = firstLine(readText(paths.workDir + QStringLiteral("/DESCRIPTION"), 4096));
    if (p.description.isEmpty())
        p.description = firstLine(out);
    if (p.description.isEmpty())
        p.description = QStringLiteral("edit by %1").arg(QFileInfo(program).fileName());
    p.rawReply = out;
    return p;
}

} // namespace

CommandAgent::CommandAgent(const AgentConfig &config)
    : CommandAgent(config.commandTemplate, std::max(1, config.commandTimeoutSec) * 1000)
{ }

CommandAgent::CommandAgent(const QString &commandTemplate, int timeoutMs)
    : m_template(commandTemplate)
    , m_timeoutMs(std::max(1, timeoutMs))
{ }

QStringList CommandAgent::expand(
    const QString &commandTemplate, const QHash<QString, QString> &values, QString *error)
{
    QChar unclosed;
    QStringList args = shellwords::split(commandTemplate, &unclosed);
    if (!unclosed.isNull()) {
        *error = QStringLiteral("the command template has an unclosed %1 quote: %2")
                     .arg(QString(unclosed), commandTemplate);
        return {};
    }
    if (args.isEmpty()) {
        *error = QStringLiteral("no command template is set for the command agent");
        return {};
    }
    for (QString &arg : args) {
        for (auto it = values.cbegin(); it != values.cend(); ++it)
            arg.replace(QLatin1Char('{') + it.key() + QLatin1Char('}'), it.value());
    }
    return args;
}

AgentResult CommandAgent::propose(const AgentContext &context)
{
    QElapsedTimer clock;
    clock.start();
    auto seconds = [&] { return double(clock.elapsed()) / 1000.0; };
    auto fail
        = [&](AgentError::Kind kind, const QString &why, bool retryable, const QString &output = QString()) {
              AgentError e;
              e.kind = kind;
              e.reason = why;
              e.retryable = retryable;
              e.rawReply = output;
              return finish(AgentResult::failure(e), seconds());
          };
    if (stopRequested())
        return cancelled(0);

    QTemporaryDir scratch(QDir::tempPath() + QStringLiteral("/autokernel-command-XXXXXX"));
    if (!scratch.isValid())
        return fail(AgentError::Kind::Command,
            QStringLiteral("cannot create a scratch folder: ") + scratch.errorString(), true);
    const ScratchPaths paths(scratch);
    QString error;
    if (!prepareScratch(paths, context, &error))
        return fail(AgentError::Kind::Command, error, true);

    const QStringList args = expand(m_template,
        { { QStringLiteral("prompt"), paths.promptFile }, { QStringLiteral("dir"), paths.workDir },
            { QStringLiteral("kernel"), paths.kernelFile } },
        &error);
    if (args.isEmpty())
        return fail(AgentError::Kind::Config, error, false);

    QProcess process;
    setUp(&process, args, paths);
    process.start();
    if (!process.waitForStarted(10000))
        return fail(AgentError::Kind::Command,
            QStringLiteral("cannot start \"%1\": %2").arg(args.first(), process.errorString()), false);

    while (!process.waitForFinished(25)) {
        if (process.state() == QProcess::NotRunning)
            break;
        if (stopRequested()) {
            killGroup(&process);
            return cancelled(seconds());
        }
        if (clock.elapsed() > m_timeoutMs) {
            killGroup(&process);
            return fail(AgentError::Kind::Timeout,
                QStringLiteral("the command did not finish within %1 s and was killed")
                    .arg(m_timeoutMs / 1000.0),
                true, readText(paths.outFile, kMaxOutputKept));
        }
    }
    const QString out = readText(paths.outFile, kMaxOutputKept);
    if (const QString why = exitProblem(process, paths.errFile); !why.isEmpty())
        return fail(AgentError::Kind::Command, why, true, out);
    if (!QFileInfo::exists(paths.kernelFile))
        return fail(AgentError::Kind::BadReply, QStringLiteral("the command removed kernel.py"), true, out);
    const QString proposed = readText(paths.kernelFile);
    if (proposed == context.kernelPy)
        return fail(
            AgentError::Kind::NoChange, QStringLiteral("the command left kernel.py unchanged"), true, out);
    return finish(AgentResult::success(proposalFrom(proposed, paths, args.first(), out)), seconds());
}

} // namespace ak
