#include "services/examplerun.h"

#include "services/backgroundjob.h"

#include "devicedetector.h"
#include "runcreator.h"
#include "runrecording.h"
#include "runstore.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <mutex>

namespace ak {

namespace {
// Profiling takes seconds to minutes: its own pool keeps the global one (run loads, diffs, device
// detection) free. At exit the pool waits for a creation that is being cancelled.
Q_GLOBAL_STATIC(QThreadPool, s_creationPool)
} // namespace

// What the GUI thread and the creating thread share. The receiver is cleared when the ExampleRun
// dies, under the mutex, so the thread never posts to a deleted object; the creator is reachable
// for cancel() while it runs.
struct ExampleRun::Shared
{
    std::mutex mutex;
    ExampleRun *receiver = nullptr;
    RunCreator *creator = nullptr;
    bool cancelled = false;

    void post(const QString &message)
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (ExampleRun *r = receiver)
            QMetaObject::invokeMethod(
                r, [r, message] { Q_EMIT r->progress(message); }, Qt::QueuedConnection);
    }
};

ExampleRun::ExampleRun(const Options &options, QObject *parent)
    : QObject(parent)
    , m_options(options)
    , m_shared(std::make_shared<Shared>())
{
    qRegisterMetaType<ak::ExampleRun::Result>();
    m_shared->receiver = this;
}

ExampleRun::~ExampleRun()
{
    cancel();
    std::lock_guard<std::mutex> lock(m_shared->mutex);
    m_shared->receiver = nullptr;
}

namespace {

// The base names of the files matching `pattern` in the resource folder `dir`, sorted.
QStringList bundled(const QString &dir, const QString &pattern)
{
    QStringList names;
    for (const QString &f : QDir(dir).entryList({ pattern }, QDir::Files, QDir::Name))
        names << QFileInfo(f).completeBaseName();
    return names;
}

// Whether r.runDir can take a new run, checked before anything is profiled. False with `r` filled
// when there is nothing to create: the example's run is already there (ok), or the folder cannot
// take one (error). A chosen folder (New Run…) must be new or empty and never holds a run already.
bool claimRunDir(const ExampleRun::Options &options, bool chosen, ExampleRun::Result &r)
{
    const QDir runDir(r.runDir);
    if (QFileInfo::exists(runDir.filePath(QStringLiteral("run.json")))) {
        if (chosen) {
            r.error = QStringLiteral("%1 already holds a run. Open it (File ▸ Open Run…) or choose another "
                                     "folder.")
                          .arg(QDir::toNativeSeparators(r.runDir));
            return false;
        }
        r.ok = true;
        return false;
    }
    if (chosen && QFileInfo(r.runDir).isDir()
        && runDir.isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)) {
        // An empty folder made in the file dialog: the rename into place needs it gone.
        if (!QDir().rmdir(r.runDir)) {
            r.error = QStringLiteral("Cannot use the folder %1.").arg(QDir::toNativeSeparators(r.runDir));
            return false;
        }
    }
    if (QFileInfo::exists(r.runDir)) {
        if (chosen) {
            r.error = QStringLiteral("%1 exists and is not empty; a new run needs an empty or new folder.")
                          .arg(QDir::toNativeSeparators(r.runDir));
            return false;
        }
        r.error = QStringLiteral("%1 exists but holds no run. Remove it to create the %2 example again.")
                      .arg(QDir::toNativeSeparators(r.runDir), options.name);
        return false;
    }
    return true;
}

RunCreator::Options creatorOptions(
    const ExampleRun::Options &options, const QString &device, const QString &outDir)
{
    RunCreator::Options o;
    o.model = options.model.isEmpty() ? options.name : options.model;
    o.dtype = options.dtype;
    o.outDir = outDir;
    o.device = device;
    o.python = options.python;
    o.top = options.top;
    o.iterations = options.iterations;
    o.warmup = options.warmup;
    o.timeoutMs = options.timeoutMs;
    return o;
}

// RunCreator's failure as one paragraph for the window (`what` names the model); false when there
// was none.
bool describeFailure(const RunCreator::Result &created, const QString &what, ExampleRun::Result &r)
{
    switch (created.failure) {
    case RunCreator::Failure::None:
        return false;
    case RunCreator::Failure::NoPython:
        r.error = QStringLiteral(
            "No Python with PyTorch was found, and profiling needs one.\n%1\n"
            "Install PyTorch (pip install torch) or set AUTOKERNEL_PYTHON to an interpreter that has it.")
                      .arg(created.error);
        return true;
    case RunCreator::Failure::ProfileFailed:
        r.error = QStringLiteral("Profiling %1 failed: %2").arg(what, created.error);
        r.details = created.traceback.trimmed();
        return true;
    case RunCreator::Failure::Cancelled:
        r.error = QStringLiteral("cancelled");
        return true;
    default:
        r.error = QStringLiteral("Could not create the run of %1: %2").arg(what, created.error);
        return true;
    }
}

} // namespace

QStringList ExampleRun::names()
{
    // The profiler library compiles resources/examples/*.py in; the list follows what is bundled.
    return bundled(QStringLiteral(":/autokernel/python/examples"), QStringLiteral("*.py"));
}

QStringList ExampleRun::recordings()
{
    return bundled(QStringLiteral(":/autokernel/recordings"), QStringLiteral("*.json"));
}

QString ExampleRun::recordingPath(const QString &name)
{
    return QStringLiteral(":/autokernel/recordings/%1.json").arg(name);
}

QString ExampleRun::defaultBaseDir()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation))
        .filePath(QStringLiteral("examples"));
}

QString ExampleRun::runDirFor(const Options &options, const QString &device)
{
    const QString base = options.baseDir.isEmpty() ? defaultBaseDir() : options.baseDir;
    return QDir(base).filePath(QStringLiteral("%1-%2").arg(options.name, device));
}

void ExampleRun::start()
{
    if (m_running)
        return;
    m_running = true;
    runInBackground(
        s_creationPool(), this, [options = m_options, shared = m_shared] { return work(options, shared); },
        [this](const Result &result) {
            m_running = false;
            Q_EMIT finished(result);
        });
}

void ExampleRun::cancel()
{
    std::lock_guard<std::mutex> lock(m_shared->mutex);
    m_shared->cancelled = true;
    if (m_shared->creator)
        m_shared->creator->cancel();
}

ExampleRun::Result ExampleRun::restoreRecording(const Options &options, const std::shared_ptr<Shared> &shared)
{
    Result r;
    const QString base = options.baseDir.isEmpty() ? defaultBaseDir() : options.baseDir;
    r.runDir = QDir(base).filePath(options.name);
    // The copy opened as an example is shared by everything that opens the example again: no writer may
    // change it (RunStore refuses it). A run to continue is a restore elsewhere.
    const QString readOnlyWhy = QStringLiteral(
        "this is the %1 recording shipped with AutoKernel Studio, opened as an example; it stays as "
        "recorded. To continue it, make a copy of your own: autokernel-cli record %2 --out run.json, then "
        "autokernel-cli restore run.json --out DIR")
                                    .arg(options.name, QDir::toNativeSeparators(r.runDir));
    if (QFileInfo::exists(QDir(r.runDir).filePath(QStringLiteral("run.json")))) {
        // Extracted by an earlier version, before copies were marked: marked now.
        QString markError;
        if (RunStore::readOnlyReason(r.runDir).isEmpty() && RunRecording::isRecording(r.runDir))
            RunStore::markReadOnly(r.runDir, readOnlyWhy, &markError);
        r.ok = true;
        return r;
    }
    if (QFileInfo::exists(r.runDir)) {
        r.error = QStringLiteral("%1 exists but holds no run. Remove it to restore the %2 recording again.")
                      .arg(QDir::toNativeSeparators(r.runDir), options.name);
        return r;
    }
    QFile file(options.recording);
    if (!file.open(QIODevice::ReadOnly)) {
        r.error
            = QStringLiteral("Cannot read the recording %1: %2").arg(options.recording, file.errorString());
        return r;
    }
    shared->post(QStringLiteral("restoring the recording"));
    // Restored next to its place and renamed into it, like a profiled example: never half there.
    QString error;
    if (!QDir().mkpath(base)) {
        r.error = QStringLiteral("Cannot create the folder %1.").arg(QDir::toNativeSeparators(base));
        return r;
    }
    QTemporaryDir partial(QDir(base).filePath(QStringLiteral(".%1-XXXXXX").arg(options.name)));
    if (!partial.isValid()
        || !RunRecording::restore(file.readAll(), options.recording, partial.path(), &error)
        || !RunStore::markReadOnly(partial.path(), readOnlyWhy, &error)) {
        r.error = QStringLiteral("Could not restore the %1 recording: %2")
                      .arg(options.name, partial.isValid() ? error : partial.errorString());
        return r;
    }
    if (!QDir().rename(partial.path(), r.runDir)) {
        if (QFileInfo::exists(QDir(r.runDir).filePath(QStringLiteral("run.json")))) {
            r.ok = true; // another window restored it first
            return r;
        }
        r.error = QStringLiteral("Could not move the restored run into %1.")
                      .arg(QDir::toNativeSeparators(r.runDir));
        return r;
    }
    partial.setAutoRemove(false);
    r.ok = true;
    r.created = true;
    return r;
}

// A new run is profiled into `outDir` (work()'s hidden folder); cancel() reaches the creator while it
// runs. False with r.error set when profiling did not make a run.
bool ExampleRun::profileInto(const Options &options, const QString &device, const QString &outDir,
    const std::shared_ptr<Shared> &shared, Result &r)
{
    RunCreator creator(creatorOptions(options, device, outDir));
    {
        std::lock_guard<std::mutex> lock(shared->mutex);
        if (shared->cancelled) {
            r.error = QStringLiteral("cancelled");
            return false;
        }
        shared->creator = &creator;
    }
    RunCreator::Callbacks callbacks;
    callbacks.deviceResolved
        = [&shared](const DeviceInfo &d) { shared->post(QStringLiteral("device: ") + d.summary()); };
    callbacks.progress = [&shared](const QString &message, double) {
        shared->post(QStringLiteral("profiling: ") + message);
    };
    callbacks.step = [&shared](const QString &step) { shared->post(step); };
    shared->post(QStringLiteral("looking for a Python with PyTorch"));
    const RunCreator::Result created = creator.create(callbacks);
    {
        std::lock_guard<std::mutex> lock(shared->mutex);
        shared->creator = nullptr;
    }
    const QString what = options.model.isEmpty() ? QStringLiteral("the %1 example").arg(options.name)
                                                 : QDir::toNativeSeparators(options.model);
    if (describeFailure(created, what, r))
        return false;
    for (const QString &note : created.notes)
        shared->post(QStringLiteral("note: ") + note);
    return true;
}

ExampleRun::Result ExampleRun::work(const Options &options, const std::shared_ptr<Shared> &shared)
{
    if (!options.recording.isEmpty())
        return restoreRecording(options, shared);
    Result r;
    QString device = options.device;
    if (device.isEmpty()) {
        shared->post(QStringLiteral("detecting this machine's GPU"));
        device = DeviceDetector::detect(0).available ? QStringLiteral("cuda") : QStringLiteral("cpu");
    }
    const bool chosen = !options.runDir.isEmpty(); // New Run…: this folder, and a new run in it
    r.runDir = chosen ? QDir(options.runDir).absolutePath() : runDirFor(options, device);
    if (!claimRunDir(options, chosen, r))
        return r;
    const QString base = QFileInfo(r.runDir).absolutePath();
    if (!QDir().mkpath(base)) {
        r.error = QStringLiteral("Cannot create the folder %1.").arg(QDir::toNativeSeparators(base));
        return r;
    }
    // Hidden, next to the final folder (same file system, so the rename below is atomic).
    QTemporaryDir partial(
        QDir(base).filePath(QStringLiteral(".%1-XXXXXX").arg(QFileInfo(r.runDir).fileName())));
    if (!partial.isValid()) {
        r.error = QStringLiteral("Cannot create a folder in %1: %2")
                      .arg(QDir::toNativeSeparators(base), partial.errorString());
        return r;
    }
    if (!profileInto(options, device, partial.path(), shared, r))
        return r;
    if (!QDir().rename(partial.path(), r.runDir)) {
        // Another window may have finished the same example first: use that one.
        if (QFileInfo::exists(QDir(r.runDir).filePath(QStringLiteral("run.json")))) {
            r.ok = true;
            return r;
        }
        r.error
            = QStringLiteral("Could not move the new run into %1.").arg(QDir::toNativeSeparators(r.runDir));
        return r;
    }
    partial.setAutoRemove(false);
    r.ok = true;
    r.created = true;
    return r;
}

} // namespace ak
