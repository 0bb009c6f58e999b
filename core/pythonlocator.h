#pragma once

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <functional>

namespace ak {

// Chooses the user's Python interpreter for the worker, in the order docs/architecture.md fixes:
// explicit choice (--python / setting), $AUTOKERNEL_PYTHON, $VIRTUAL_ENV/bin/python,
// $CONDA_PREFIX/bin/python, the first python3 on PATH that can import torch, /usr/bin/python3.
//
// An explicit choice (the first two) is honoured or reported, never silently replaced: if it cannot
// import torch the result is an error naming it. Environments and PATH entries are candidates: one that
// cannot import torch is skipped and the reason kept for the final error message.
class PythonLocator
{
public:
    struct Probe
    {
        bool ok = false; // the interpreter ran and has torch installed
        QString torchVersion; // "2.11.0+cu128"
        QString error; // one line: why not
    };
    using ProbeFn = std::function<Probe(const QString &python)>;

    struct Choice
    {
        QString python; // absolute path; empty when none was found
        QString source; // "--python", "AUTOKERNEL_PYTHON", "VIRTUAL_ENV", "CONDA_PREFIX", "PATH", "fallback"
        QString torchVersion;
        QString error; // set when python is empty: what was tried and why each was refused
        QStringList skipped; // "path (source): reason" for candidates passed over
        bool ok() const { return !python.isEmpty(); }
    };

    explicit PythonLocator(const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment());

    void setExplicit(const QString &python) { m_explicit = python; }
    void setFallback(const QString &python) { m_fallback = python; } // default /usr/bin/python3
    void setProbe(ProbeFn probe) { m_probe = std::move(probe); } // default: probeTorch
    void setProbeTimeoutMs(int ms) { m_probeTimeoutMs = ms; }

    Choice locate() const;

    // The interpreter for work on a run: an explicit choice, then $AUTOKERNEL_PYTHON, then the one the
    // run was profiled with (`recorded`: RunConfig::python) if it exists on this machine, then locate().
    static Choice forRun(const QString &recorded, const QString &explicitPython);

    // Runs `python -c ...` to find torch (importlib find_spec + its installed version) without importing it.
    static Probe probeTorch(const QString &python, int timeoutMs = 30000);

private:
    QString resolveExecutable(const QString &python) const;

    QProcessEnvironment m_env;
    QString m_explicit;
    QString m_fallback = QStringLiteral("/usr/bin/python3");
    ProbeFn m_probe;
    int m_probeTimeoutMs = 30000;
};

} // namespace ak
