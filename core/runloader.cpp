#include "runloader.h"
#include "corelog.h"
#include "runrecording.h"

#include "gitrepo.h"
#include "jsonfield.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>

#include <algorithm>

using nlohmann::json;

namespace ak {

namespace {

bool hasWork(const Experiment &e)
{
    return e.status != ExperimentStatus::Baseline;
}

// A run action: the review mode, or a move-on rule change. `where` ("experiments.jsonl:N: ")
// starts each warning.
void applyRunEntry(RunSnapshot &s, const LogEntry &e, const QString &where)
{
    if (e.action == QLatin1String("review")) {
        s.reviewMode = e.value;
    } else if (e.action == QLatin1String("move_on")) {
        s.moveOnChanges.push_back({ e.line, e.time, e.by, e.moveOn });
        // run.json is the rules' home, but the line is the change's commit point: a run.json that
        // is still the file this change replaced has not been rewritten yet (the writer is about
        // to, or was killed first), so the line's rules apply. A run.json edited afterwards wins.
        if (e.runJsonBefore.isEmpty() || e.runJsonBefore == GitRepo::blobHash(s.runJson)) {
            QString why;
            const QByteArray patched = RunConfig::withMoveOn(s.runJson, e.moveOn, &why);
            if (patched.isEmpty())
                s.warnings << where + why;
            else
                RunLoader::setRunJson(s, patched, nullptr);
        }
    }
}

// A kernel's "add" line: the first one counts.
void addKernelEntry(RunSnapshot &s, const LogEntry &e, const QString &where)
{
    const QString name = KernelRecord::keyOf(e.kernel);
    if (s.kernelIndex.contains(name)) {
        s.warnings << where + QStringLiteral("kernel %1 added twice; the first entry is kept").arg(name);
        return;
    }
    KernelRecord k = e.record;
    k.folder = QStringLiteral("kernels/") + name;
    // A folder the plug-check refused keeps that state for good: no steering gives it budget.
    k.state = k.contract.refused.isEmpty() ? KernelState::Waiting : KernelState::Unpluggable;
    k.stateReason = k.contract.refused;
    s.kernelIndex.insert(name, int(s.kernels.size()));
    s.kernels.push_back(k);
}

// A person's steering of a known kernel (pin, skip, done, unpin, unskip); unpin and unskip resume
// it as it was before (active once it has experiments).
void steerKernelEntry(RunSnapshot &s, const LogEntry &e, const QString &where)
{
    const QString name = KernelRecord::keyOf(e.kernel);
    const auto it = s.kernelIndex.constFind(name);
    if (it == s.kernelIndex.constEnd()) {
        s.warnings << where + QStringLiteral("unknown kernel \"%1\"").arg(name);
        return;
    }
    KernelRecord &k = s.kernels[*it];
    if (k.state == KernelState::Unpluggable) {
        s.warnings << where
                + QStringLiteral("kernel %1 is not pluggable; \"%2\" ignored").arg(name, e.action);
        return;
    }
    const KernelState resumed = k.experimentCount > 0 ? KernelState::Active : KernelState::Waiting;
    if (e.action == QLatin1String("pin"))
        k.state = KernelState::Pinned;
    else if (e.action == QLatin1String("skip"))
        k.state = KernelState::Skipped;
    else if (e.action == QLatin1String("done"))
        k.state = KernelState::Done;
    else if (e.action == QLatin1String("unpin") || e.action == QLatin1String("unskip"))
        k.state = resumed;
    else
        s.warnings << where + QStringLiteral("unknown kernel action \"%1\"").arg(e.action);
    k.stateReason = k.state == resumed ? QString() : e.reason;
}

// An experiment line: a new experiment, or a later state of one already seen (the last line wins);
// a line with a head moves its kernel's head.
void applyExperimentEntry(RunSnapshot &s, const LogEntry &e, const QString &where)
{
    const Experiment &x = e.experiment;
    const auto kit = s.kernelIndex.constFind(KernelRecord::keyOf(x.kernel));
    if (kit == s.kernelIndex.constEnd()) {
        s.warnings << where
                + QStringLiteral("experiment %1 names unknown kernel \"%2\"").arg(x.id).arg(x.kernel);
        return;
    }
    KernelRecord &k = s.kernels[*kit];
    const auto it = s.experimentIndex.constFind(x.id);
    if (it == s.experimentIndex.constEnd()) {
        s.experimentIndex.insert(x.id, int(s.experiments.size()));
        s.experiments.push_back(x);
        if (hasWork(x)) {
            ++k.experimentCount;
            if (k.state == KernelState::Waiting)
                k.state = KernelState::Active;
        }
    } else {
        s.experiments[*it] = x;
    }
    if (!e.head.isEmpty()) {
        k.head = e.head;
        k.headExperiment = x.id;
    }
}

// The roofs the loop measured and took % of roof against (roofs.json, by device label; DeviceLoop
// writes it): the first device's, as run.json holds one device.
MeasuredRoofs runRoofs(const QString &runDir)
{
    QFile f(QDir(runDir).filePath(QStringLiteral("roofs.json")));
    if (runDir.isEmpty() || !f.open(QIODevice::ReadOnly))
        return {};
    const json all = json::parse(f.readAll().toStdString(), nullptr, false);
    if (!all.is_object())
        return {};
    for (auto it = all.begin(); it != all.end(); ++it) {
        const MeasuredRoofs m = MeasuredRoofs::fromJson(*it);
        if (m.known())
            return m;
    }
    return {};
}

} // namespace

bool RunLoader::setRunJson(RunSnapshot &s, const QByteArray &data, QString *error)
{
    const MeasuredRoofs folded = s.config.device.measured; // roofs.json's, folded in by applyRunJson
    s.runJson = data;
    const bool ok = RunConfig::parse(data, &s.config, error);
    if (!s.config.device.measured.known())
        s.config.device.measured = folded; // a steering write does not forget the measured roofs
    return ok;
}

bool RunLoader::applyRunJson(RunSnapshot &s, const QByteArray &data, QString *error)
{
    s.config.device.measured = MeasuredRoofs(); // read again below: roofs.json may be newer
    if (!setRunJson(s, data, error))
        return false;
    if (!s.config.device.measured.known())
        s.config.device.measured = runRoofs(s.runDir);
    s.reviewMode = s.config.reviewMode;
    return true;
}

void RunLoader::apply(RunSnapshot &s, const LogEntry &e)
{
    const QString where = QStringLiteral("%1:%2: ").arg(ExperimentLog::fileName()).arg(e.line);
    switch (e.type) {
    case LogEntry::Type::Run:
        applyRunEntry(s, e, where);
        return;
    case LogEntry::Type::Kernel:
        if (e.action == QLatin1String("add"))
            addKernelEntry(s, e, where);
        else
            steerKernelEntry(s, e, where);
        return;
    case LogEntry::Type::Experiment:
        break;
    }
    applyExperimentEntry(s, e, where);
}

void RunLoader::finish(RunSnapshot &s)
{
    const bool kernelsSorted = std::is_sorted(s.kernels.cbegin(), s.kernels.cend(),
        [](const KernelRecord &a, const KernelRecord &b) { return a.rank < b.rank; });
    if (!kernelsSorted) {
        std::stable_sort(s.kernels.begin(), s.kernels.end(),
            [](const KernelRecord &a, const KernelRecord &b) { return a.rank < b.rank; });
        s.kernelIndex.clear();
        for (int i = 0; i < s.kernels.size(); ++i)
            s.kernelIndex.insert(KernelRecord::keyOf(s.kernels[i].folder), i);
    }
    const bool experimentsSorted = std::is_sorted(s.experiments.cbegin(), s.experiments.cend(),
        [](const Experiment &a, const Experiment &b) { return a.id < b.id; });
    if (!experimentsSorted) {
        std::sort(s.experiments.begin(), s.experiments.end(),
            [](const Experiment &a, const Experiment &b) { return a.id < b.id; });
        s.experimentIndex.clear();
        for (int i = 0; i < s.experiments.size(); ++i)
            s.experimentIndex.insert(s.experiments[i].id, i);
    }
}

RunSnapshotPtr RunLoader::load(const QString &dir, QString *error)
{
    const QDir d(dir);
    const QString runJsonPath = d.filePath(QStringLiteral("run.json"));
    if (!QFileInfo(runJsonPath).isFile()) {
        if (error)
            *error = QFileInfo(dir).isDir() ? QStringLiteral("%1: not a run directory (no run.json)").arg(dir)
                                            : QStringLiteral("%1: no such directory").arg(dir);
        return nullptr;
    }
    QElapsedTimer clock;
    clock.start();
    auto s = std::make_shared<RunSnapshot>();
    s->runDir = d.absolutePath();

    QFile runJson(runJsonPath);
    QString why;
    if (!runJson.open(QIODevice::ReadOnly)) {
        s->warnings << QStringLiteral("run.json: %1").arg(runJson.errorString());
    } else {
        s->runJsonOnDisk = runJson.readAll();
        if (!applyRunJson(*s, s->runJsonOnDisk, &why))
            s->warnings << why;
    }

    const ExperimentLog::ReadResult log = ExperimentLog::read(d.filePath(ExperimentLog::fileName()));
    s->warnings << log.errors;
    s->experiments.reserve(int(log.entries.size() / 2 + 1));
    for (const LogEntry &e : log.entries)
        apply(*s, e);
    finish(*s);
    s->logBytes = log.completeBytes;
    s->logLines = log.completeLines;
    s->logWarnings = int(s->warnings.size());
    readSideFiles(*s);
    qCDebug(lcCore) << "loaded" << s->runDir << s->kernels.size() << "kernels," << s->experiments.size()
                    << "experiments in" << clock.elapsed() << "ms";
    return s;
}

RunSnapshotPtr RunLoader::reload(const RunSnapshotPtr &previous, QString *error)
{
    if (!previous || previous->runDir.isEmpty())
        return nullptr;
    const QDir d(previous->runDir);
    QFile runJson(d.filePath(QStringLiteral("run.json")));
    QFile log(d.filePath(ExperimentLog::fileName()));
    // Only appended whole lines are trusted: the byte before them must still be the newline that
    // ended the last line read.
    const bool appendedOnly = previous->logBytes > 0 && runJson.open(QIODevice::ReadOnly)
        && runJson.readAll() == previous->runJsonOnDisk && log.open(QIODevice::ReadOnly)
        && log.size() >= previous->logBytes && log.seek(previous->logBytes - 1) && log.read(1) == "\n";
    if (!appendedOnly)
        return load(previous->runDir, error);
    QElapsedTimer clock;
    clock.start();
    const ExperimentLog::ReadResult tail
        = ExperimentLog::parse(log.readAll(), ExperimentLog::fileName(), previous->logLines + 1);
    auto s = std::make_shared<RunSnapshot>(*previous);
    s->warnings = previous->warnings.mid(0, previous->logWarnings);
    s->warnings << tail.errors;
    s->verification.reset();
    s->inModel = InModelChecks();
    for (const LogEntry &e : tail.entries)
        apply(*s, e);
    finish(*s);
    s->logBytes += tail.completeBytes;
    s->logLines += tail.completeLines;
    s->logWarnings = int(s->warnings.size());
    readSideFiles(*s);
    qCDebug(lcCore) << "reloaded" << s->runDir << tail.entries.size() << "new log lines in" << clock.elapsed()
                    << "ms";
    return s;
}

void RunLoader::readSideFiles(RunSnapshot &s)
{
    const QDir d(s.runDir);
    // A verification that cannot be read is a warning, never a reason not to show the run.
    QFile verification(d.filePath(QStringLiteral("verification.json")));
    if (verification.exists()) {
        if (!verification.open(QIODevice::ReadOnly))
            s.warnings << QStringLiteral("verification.json: %1").arg(verification.errorString());
        else
            s.verification = ModelVerification::parse(
                verification.readAll(), QStringLiteral("verification.json"), &s.warnings);
    }
    // The loop's in-model checks: each one appends a log line, so a live window reloads and reads them.
    QFile inModel(d.filePath(InModelChecks::fileName()));
    if (inModel.exists()) {
        if (!inModel.open(QIODevice::ReadOnly))
            s.warnings << QStringLiteral("%1: %2").arg(InModelChecks::fileName(), inModel.errorString());
        else
            s.inModel = InModelChecks::parse(inModel.readAll(), InModelChecks::fileName(), &s.warnings);
    }

    s.loop = LoopInfo::read(s.runDir);

    RunRecording::Info recording;
    s.recording = RunRecording::isRecording(s.runDir, &recording) ? recording.summary() : QString();

    // One ref lookup, not a history walk.
    auto repo = GitRepo::open(s.runDir, nullptr);
    s.bestCommit = repo ? repo->resolveRef(QStringLiteral("refs/heads/best")) : QString();
}

} // namespace ak
