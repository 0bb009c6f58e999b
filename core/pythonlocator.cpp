#include "pythonlocator.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

namespace ak {

PythonLocator::PythonLocator(const QProcessEnvironment &env)
    : m_env(env)
{ }

QString PythonLocator::resolveExecutable(const QString &python) const
{
    if (python.contains(QLatin1Char('/'))) {
        const QFileInfo info(python);
        return info.isFile() && info.isExecutable() ? info.absoluteFilePath() : QString();
    }
    // A bare name ("python3.11") is looked up on the environment's PATH, not the process's.
    const QStringList dirs = m_env.value(QStringLiteral("PATH")).split(QLatin1Char(':'), Qt::SkipEmptyParts);
    return QStandardPaths::findExecutable(python, dirs);
}

PythonLocator::Probe PythonLocator::probeTorch(const QString &python, int timeoutMs)
{
    Probe probe;
    QProcess p;
    // find_spec + metadata instead of `import torch`: milliseconds instead of seconds per candidate. A
    // torch that is installed but broken is reported by the worker's first torch op instead.
    static const QString code = QStringLiteral(
        "import importlib.util, sys\n"
        "if importlib.util.find_spec('torch') is None:\n"
        "    sys.stderr.write(\"ModuleNotFoundError: No module named 'torch'\\n\"); sys.exit(1)\n"
        "try:\n"
        "    import importlib.metadata as md; v = md.version('torch')\n"
        "except Exception:\n"
        "    v = 'unknown version'\n"
        "sys.stdout.write(v)\n");
    p.start(python, { QStringLiteral("-c"), code });
    if (!p.waitForStarted(10000)) {
        probe.error = QStringLiteral("cannot run it: %1").arg(p.errorString());
        return probe;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(2000);
        probe.error = QStringLiteral("the torch probe did not finish within %1 s").arg(timeoutMs / 1000);
        return probe;
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        // The last line of the traceback says why ("ModuleNotFoundError: No module named 'torch'").
        const QStringList lines = QString::fromUtf8(p.readAllStandardError())
                                      .trimmed()
                                      .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        probe.error = lines.isEmpty()
            ? QStringLiteral("the torch probe failed with exit code %1").arg(p.exitCode())
            : lines.last().trimmed();
        return probe;
    }
    probe.ok = true;
    probe.torchVersion = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
    return probe;
}

PythonLocator::Choice PythonLocator::locate() const
{
    const ProbeFn probe
        = m_probe ? m_probe : [t = m_probeTimeoutMs](const QString &py) { return probeTorch(py, t); };
    Choice choice;
    QStringList tried;

    // An explicit choice is final: use it or say what is wrong with it.
    const auto explicitChoice = [&](const QString &given, const QString &source) {
        const QString exe = resolveExecutable(given);
        if (exe.isEmpty()) {
            choice.error
                = QStringLiteral("Python interpreter '%1' (from %2) does not exist or is not executable")
                      .arg(given, source);
            return choice;
        }
        const Probe r = probe(exe);
        if (!r.ok) {
            choice.error = QStringLiteral("Python interpreter '%1' (from %2) cannot import torch: %3")
                               .arg(exe, source, r.error);
            return choice;
        }
        choice.python = exe;
        choice.source = source;
        choice.torchVersion = r.torchVersion;
        return choice;
    };
    if (!m_explicit.isEmpty())
        return explicitChoice(m_explicit, QStringLiteral("--python"));
    const QString fromEnv = m_env.value(QStringLiteral("AUTOKERNEL_PYTHON"));
    if (!fromEnv.isEmpty())
        return explicitChoice(fromEnv, QStringLiteral("AUTOKERNEL_PYTHON"));

    QList<QPair<QString, QString>> candidates; // path, source
    for (const char *var : { "VIRTUAL_ENV", "CONDA_PREFIX" }) {
        const QString prefix = m_env.value(QLatin1String(var));
        if (!prefix.isEmpty())
            candidates.append({ prefix + QStringLiteral("/bin/python"), QLatin1String(var) });
    }
    for (const QString &dir : m_env.value(QStringLiteral("PATH")).split(QLatin1Char(':'), Qt::SkipEmptyParts))
        candidates.append({ QDir(dir).filePath(QStringLiteral("python3")), QStringLiteral("PATH") });
    if (!m_fallback.isEmpty())
        candidates.append({ m_fallback, QStringLiteral("fallback") });

    // Seen interpreters by canonical directory + file name: /bin/python3 is /usr/bin/python3 on a merged
    // /usr, but a venv's bin/python must stay distinct from the system python it links to (it runs with
    // the venv's packages).
    QStringList seen;
    for (const auto &[path, source] : candidates) {
        const QFileInfo info(path);
        if (!info.isFile() || !info.isExecutable()) {
            if (source != QLatin1String("PATH")) // a PATH directory without python3 is not news
                choice.skipped << QStringLiteral("%1 (%2): not an executable file").arg(path, source);
            continue;
        }
        const QString canonical
            = QFileInfo(info.absolutePath()).canonicalFilePath() + QLatin1Char('/') + info.fileName();
        if (seen.contains(canonical))
            continue;
        seen << canonical;
        const Probe r = probe(info.absoluteFilePath());
        if (r.ok) {
            choice.python = info.absoluteFilePath();
            choice.source = source;
            choice.torchVersion = r.torchVersion;
            return choice;
        }
        choice.skipped << QStringLiteral("%1 (%2): %3").arg(info.absoluteFilePath(), source, r.error);
    }
    choice.error
        = QStringLiteral("no Python interpreter that can import torch was found. Pass --python PATH or "
                         "set AUTOKERNEL_PYTHON to the interpreter that has your torch installation.");
    if (!choice.skipped.isEmpty())
        choice.error += QStringLiteral("\nTried:\n  ") + choice.skipped.join(QStringLiteral("\n  "));
    return choice;
}

PythonLocator::Choice PythonLocator::forRun(const QString &recorded, const QString &explicitPython)
{
    QString python = explicitPython;
    if (python.isEmpty() && qEnvironmentVariableIsEmpty("AUTOKERNEL_PYTHON")
        && QFileInfo(recorded).isExecutable())
        python = recorded;
    PythonLocator locator;
    locator.setExplicit(python);
    return locator.locate();
}

} // namespace ak
