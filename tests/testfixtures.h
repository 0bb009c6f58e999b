#pragma once

// Fixtures the test suites share: small run directories, the CLI run as a child process, and (in
// suites that link the window) a run opened in it and widgets reached by their object names. Inline,
// so that a suite takes only what it uses.

#include "kernelrecord.h"
#include "runrecording.h"
#include "runstore.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <vector>

// A suite that needs a service (sshd, Slurm, rsync) skips without it, but CI sets
// AUTOKERNEL_REQUIRE_SERVICES (.ci/run): there a missing service fails, since ctest counts a skip
// as a pass and the suite would prove nothing.
#define AK_SKIP_WITHOUT_SERVICE(why)                                                                         \
    do {                                                                                                     \
        if (qEnvironmentVariableIsSet("AUTOKERNEL_REQUIRE_SERVICES"))                                        \
            QFAIL(qPrintable(QStringLiteral("AUTOKERNEL_REQUIRE_SERVICES is set: ") + (why)));               \
        QSKIP(qPrintable(why));                                                                              \
    } while (false)

namespace ak::test {

struct CliResult
{
    int exitCode = -1; // -1: it crashed or was killed at the time limit
    QString out;
    QString err;
    double seconds = 0;
};

inline QString cliPath()
{
    return qEnvironmentVariable("AUTOKERNEL_CLI");
}

inline QString testPython()
{
    return qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
}

// Runs `program` to its end (killed after timeoutMs) and collects what it printed.
inline CliResult runProgram(const QString &program, const QStringList &args, int timeoutMs = 30000,
    const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    QElapsedTimer clock;
    clock.start();
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
        QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError()),
        clock.elapsed() / 1000.0 };
}

inline CliResult runCli(const QStringList &args, int timeoutMs = 30000,
    const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    return runProgram(cliPath(), args, timeoutMs, env);
}

// `autokernel-cli rules RUN_DIR` with every move-on rule switched off (0), so a test's loop keeps
// working on its kernels until the test stops it; one list, so a rule added later is off everywhere
// (the in-model rule, left on in two such lists, once retired a test's one kernel and ended its loop).
inline QStringList everyMoveOnRuleOff(const QString &runDir)
{
    return { QStringLiteral("rules"), runDir, QStringLiteral("--speedup-over-baseline"), QStringLiteral("0"),
        QStringLiteral("--roof-pct"), QStringLiteral("0"), QStringLiteral("--max-consecutive-reverts"),
        QStringLiteral("0"), QStringLiteral("--max-in-model-misses"), QStringLiteral("0") };
}

struct TestKernel
{
    KernelRecord record;
    QByteArray source;
};

// A kernel of rank `rank` named `name`, its op type `op` (none when empty), its share of the model
// `share`, its kernel.py `source`.
inline TestKernel testKernel(int rank, const QString &name, const QByteArray &source = "BASE = 1\n",
    const QString &op = QString(), double share = 0)
{
    TestKernel k;
    k.record.rank = rank;
    k.record.name = name;
    k.record.opType = op;
    k.record.share = share;
    k.source = source;
    return k;
}

// A run made from `runJson` with `kernels`, closed again (nobody writes it); false, with the store's
// error as a warning, when it cannot be made.
inline bool makeRunDir(const QString &dir,
    const nlohmann::json &runJson = nlohmann::json { { "model", "tiny.py" } },
    const std::vector<TestKernel> &kernels = { testKernel(1, QStringLiteral("matmul")) })
{
    QString error;
    auto store = RunStore::create(dir, runJson, &error);
    bool ok = bool(store);
    for (const TestKernel &k : kernels) {
        if (!ok)
            break;
        ok = store->addKernel(k.record, k.source, &error).id != 0;
    }
    if (!ok)
        qWarning("%s", qPrintable(error));
    return ok;
}

// Records a finished experiment on `kernel` whose kernel.py is "X = <speedup>" (the tests' way to make
// a run's history); its id, 0 when the store refused (with a warning).
inline int recordExperiment(RunStore &store, const QString &kernel, double speedup, ExperimentStatus status)
{
    QString error;
    const Experiment e = store.beginExperiment(kernel, "X = " + QByteArray::number(speedup) + "\n",
        QStringLiteral("tune"), QStringLiteral("try %1").arg(speedup), &error);
    Metrics m;
    m.correct = true;
    m.latencyUs = 100.0 / speedup;
    m.speedup = speedup;
    if (e.id == 0 || !store.finishExperiment(e.id, status, m, QString(), &error)) {
        qWarning("%s", qPrintable(error));
        return 0;
    }
    return e.id;
}

#ifdef AUTOKERNEL_SOURCE_DIR
// A recording that ships (resources/recordings/NAME.json) restored into `dir`: "" or why not.
inline QString restoreShippedRecording(const QString &name, const QString &dir)
{
    QFile file(
        QStringLiteral(AUTOKERNEL_SOURCE_DIR "/resources/recordings/") + name + QStringLiteral(".json"));
    if (!file.open(QIODevice::ReadOnly))
        return QStringLiteral("cannot read ") + file.fileName();
    QString error;
    return RunRecording::restore(file.readAll(), file.fileName(), dir, &error) ? QString() : error;
}
#endif

} // namespace ak::test

#ifdef QT_WIDGETS_LIB
#include "mainwindow.h"

#include <QApplication>
#include <QSignalSpy>
#include <QtTest>

namespace ak::test {

inline bool openAndWait(MainWindow &w, const QString &dir)
{
    QSignalSpy loaded(&w, &MainWindow::runLoaded);
    w.openRun(dir);
    return loaded.wait(10000) || loaded.count() > 0;
}

// The child of `root` called `name` (tests reach widgets by object name, not through getters); a
// test that asks for a child the window does not have stops there, naming it, instead of crashing on
// a null pointer further on.
template<class T>
T *named(const QObject *root, const char *name)
{
    T *child = root->findChild<T *>(QLatin1String(name));
    if (!child)
        qFatal("no %s named \"%s\" under %s", T::staticMetaObject.className(), name,
            qPrintable(root->objectName()));
    return child;
}

// The top-level window called `name` (the presentation is a window of its own, not a child of the
// main window), found the way a user sees it: among the application's windows.
template<class T>
T *topLevel(const char *name)
{
    for (QWidget *w : QApplication::topLevelWidgets())
        if (w->objectName() == QLatin1String(name))
            if (T *t = qobject_cast<T *>(w))
                return t;
    qFatal("no top-level %s named \"%s\"", T::staticMetaObject.className(), name);
    return nullptr;
}

} // namespace ak::test
#endif
