// RunStore: steering (pin, skip, revert, review, move-on rules), draining the queue of steering
// requests from processes that do not hold the lock (RequestQueue), and the derived state every
// operation updates after its log line: kernel branch, working-tree kernel.py, the best commit,
// results.tsv.
#include "errorout.h"
#include "runstore.h"

#include "atomicfile.h"
#include "experimentlog.h"
#include "gitrepo.h"
#include "jsonfield.h"
#include "requestqueue.h"
#include "resultstsv.h"
#include "runconfig.h"
#include "runloader.h"
#include "steerrequest.h"

#include <QDir>
#include <QFile>

using nlohmann::json;

namespace ak {

bool RunStore::kernelEvent(
    const QString &kernel, const QString &action, const QString &reason, QString *error)
{
    const KernelRecord *k = findKernel(kernel, error);
    if (!k)
        return false;
    if (k->state == KernelState::Unpluggable)
        return fail(error,
            QStringLiteral("kernel %1 is not pluggable into the model (%2): it gets no budget")
                .arg(kernel, k->stateReason));
    const bool pinned = k->state == KernelState::Pinned;
    const bool skipped = k->state == KernelState::Skipped;
    if ((action == QLatin1String("unpin") && !pinned) || (action == QLatin1String("unskip") && !skipped))
        return fail(error,
            QStringLiteral("kernel %1 is not %2")
                .arg(kernel,
                    action == QLatin1String("unpin") ? QStringLiteral("pinned") : QStringLiteral("skipped")));
    if ((action == QLatin1String("pin") && pinned) || (action == QLatin1String("skip") && skipped))
        return fail(error,
            QStringLiteral("kernel %1 is already %2")
                .arg(kernel, pinned ? QStringLiteral("pinned") : QStringLiteral("skipped")));
    LogEntry e;
    e.type = LogEntry::Type::Kernel;
    e.action = action;
    e.kernel = KernelRecord::keyOf(kernel);
    e.reason = reason;
    return appendLog(e, error);
}

bool RunStore::pin(const QString &kernel, const QString &reason, QString *error)
{
    return kernelEvent(kernel, QStringLiteral("pin"), reason, error);
}
bool RunStore::unpin(const QString &kernel, QString *error)
{
    return kernelEvent(kernel, QStringLiteral("unpin"), QString(), error);
}
bool RunStore::skip(const QString &kernel, const QString &reason, QString *error)
{
    return kernelEvent(kernel, QStringLiteral("skip"), reason, error);
}
bool RunStore::unskip(const QString &kernel, QString *error)
{
    return kernelEvent(kernel, QStringLiteral("unskip"), QString(), error);
}
bool RunStore::markDone(const QString &kernel, const QString &reason, QString *error)
{
    return kernelEvent(kernel, QStringLiteral("done"), reason, error);
}

bool RunStore::setReviewMode(bool on, QString *error)
{
    LogEntry e;
    e.type = LogEntry::Type::Run;
    e.action = QStringLiteral("review");
    e.value = on;
    return appendLog(e, error);
}

bool RunStore::setMoveOnRules(const MoveOnRules &rules, QString *error, const QString &by)
{
    QString why;
    if (!MoveOnRules::fromJson(rules.toJson(), nullptr, &why))
        return fail(error, why);
    // Start from the file on disk, so a hand edit of another setting made while this writer runs is
    // kept; the writer's copy is the fallback.
    QByteArray before = m_state.runJson;
    QFile file(path(QStringLiteral("run.json")));
    if (file.open(QIODevice::ReadOnly))
        before = file.readAll();
    const QByteArray after = RunConfig::withMoveOn(before, rules, error);
    if (after.isEmpty())
        return false;
    if (after == before && m_state.runJson == after)
        return true; // nothing changes: no line, no commit
    const QString blob = m_repo->writeBlob(after, error);
    if (blob.isEmpty())
        return false;
    LogEntry line;
    line.type = LogEntry::Type::Run;
    line.action = QStringLiteral("move_on");
    line.moveOn = rules;
    line.by = by.isEmpty() ? author() : by;
    line.runJsonBefore = GitRepo::blobHash(before);
    if (!appendLog(line, error)) // the commit point
        return false;
    RunLoader::setRunJson(m_state, after, nullptr);
    if (!AtomicFile::write(path(QStringLiteral("run.json")), after, error))
        return false;
    m_rootFiles.insert(QStringLiteral("run.json"), blob);
    return updateBest(
        QString(), QStringLiteral("Move-on rules: %1 (set by %2)").arg(rules.summary(), line.by), error);
}

bool RunStore::setWorker(
    const QString &launcher, const QString &python, const QString &slurm, qint64 slurmJob, QString *error)
{
    if (slurm.isEmpty())
        slurmJob = 0;
    if (launcher == m_state.config.workerLauncher && python == m_state.config.workerPython
        && slurm == m_state.config.workerSlurm && slurmJob == m_state.config.workerSlurmJob)
        return true;
    QByteArray before = m_state.runJson;
    QFile file(path(QStringLiteral("run.json")));
    if (file.open(QIODevice::ReadOnly))
        before = file.readAll(); // keep a hand edit made while this writer runs
    nlohmann::json worker = nlohmann::json::object();
    if (!launcher.isEmpty())
        worker["launcher"] = launcher.toStdString();
    if (!python.isEmpty())
        worker["python"] = python.toStdString();
    if (!slurm.isEmpty())
        worker["slurm"] = slurm.toStdString();
    if (slurmJob > 0)
        worker["slurm_job"] = slurmJob;
    return writeRunJsonSection(before, "worker", worker,
        !slurm.isEmpty() ? QStringLiteral("Workers: in Slurm job %1 (salloc %2)").arg(slurmJob).arg(slurm)
            : launcher.isEmpty() ? QStringLiteral("Workers: local")
                                 : QStringLiteral("Workers: through '%1'").arg(launcher),
        error);
}

bool RunStore::setAllowReducedPrecision(bool on, QString *error)
{
    if (on == m_state.config.allowReducedPrecision)
        return true;
    QByteArray before = m_state.runJson;
    QFile file(path(QStringLiteral("run.json")));
    if (file.open(QIODevice::ReadOnly))
        before = file.readAll(); // keep a hand edit made while this writer runs
    nlohmann::json settings = nlohmann::json::object();
    try {
        const nlohmann::json old = nlohmann::json::parse(before.toStdString());
        if (const auto st = old.find("settings"); st != old.end() && st->is_object())
            settings = *st;
    } catch (const nlohmann::json::exception &) { // withSection names the problem below
    }
    settings["allow_reduced_precision"] = on;
    return writeRunJsonSection(before, "settings", settings,
        on ? QStringLiteral("Precision: reduced-precision kernels allowed (kept, flagged)")
           : QStringLiteral("Precision: reduced-precision kernels refused"),
        error);
}

Experiment RunStore::revert(const QString &kernel, int experimentId, QString *error)
{
    const KernelRecord *k = findKernel(kernel, error);
    if (!k)
        return Experiment();
    const QString name = KernelRecord::keyOf(kernel);
    if (k->state == KernelState::Pinned)
        return fail(error, QStringLiteral("kernel %1 is pinned; unpin it first").arg(name)), Experiment();
    const Experiment *source = m_state.experiment(experimentId);
    if (!source || source->kernel != name)
        return fail(error,
                   QStringLiteral("experiment %1 is not an experiment of kernel %2")
                       .arg(experimentId)
                       .arg(name)),
               Experiment();
    if (source->status != ExperimentStatus::Kept && source->status != ExperimentStatus::Rejected
        && source->status != ExperimentStatus::Baseline)
        return fail(error,
                   QStringLiteral(
                       "experiment %1 was %2: only kept, rejected or baseline experiments can be restored")
                       .arg(experimentId)
                       .arg(statusText(source->status))),
               Experiment();
    const QString tree = m_repo->treeOf(source->commit);
    if (tree.isEmpty())
        return fail(error,
                   QStringLiteral("experiment %1: commit %2 is missing")
                       .arg(experimentId)
                       .arg(source->commit)),
               Experiment();

    Experiment e;
    e.id = m_nextId;
    e.kernel = name;
    e.parent = k->head;
    e.agent = QStringLiteral("user");
    e.description = QStringLiteral("Revert to experiment %1: %2").arg(experimentId).arg(source->description);
    e.status = ExperimentStatus::Kept;
    e.metrics = source->metrics; // the restored code's measurements
    e.started = e.finished = QDateTime::currentDateTimeUtc();
    e.commit = m_repo->writeCommit(tree, e.parent.isEmpty() ? QStringList() : QStringList { e.parent },
        commitMessage(e), e.started, error);
    if (e.commit.isEmpty()
        || !m_repo->setRef(
            QStringLiteral("refs/experiments/%1").arg(e.id), e.commit, QStringLiteral("revert"), error))
        return Experiment();
    ++m_nextId;
    LogEntry line;
    line.action = QStringLiteral("revert");
    line.experiment = e;
    line.head = e.commit;
    if (!appendLog(line, error))
        return Experiment();
    exportRow(Experiment(), e);
    if (!moveHead(name, e.commit, error))
        return Experiment();
    return e;
}

bool RunStore::accept(int id, QString *error)
{
    const Experiment *p = m_state.experiment(id);
    if (!p || p->status != ExperimentStatus::Pending)
        return fail(error,
            p ? QStringLiteral("experiment %1 is %2, not pending").arg(id).arg(statusText(p->status))
              : QStringLiteral("unknown experiment %1").arg(id));
    if (const KernelRecord *k = m_state.kernel(p->kernel); k && k->state == KernelState::Pinned)
        return fail(error, QStringLiteral("kernel %1 is pinned; unpin it first").arg(p->kernel));
    const Experiment before = *p;
    Experiment e = before;
    e.status = ExperimentStatus::Kept;
    e.finished = QDateTime::currentDateTimeUtc();
    e.commit = finalCommit(e, error);
    if (e.commit.isEmpty())
        return false;
    LogEntry line;
    line.action = QStringLiteral("accept");
    line.experiment = e;
    line.head = e.commit;
    if (!appendLog(line, error))
        return false;
    exportRow(before, e);
    return moveHead(e.kernel, e.commit, error);
}

bool RunStore::reject(int id, const QString &reason, QString *error)
{
    const Experiment *p = m_state.experiment(id);
    if (!p || p->status != ExperimentStatus::Pending)
        return fail(error,
            p ? QStringLiteral("experiment %1 is %2, not pending").arg(id).arg(statusText(p->status))
              : QStringLiteral("unknown experiment %1").arg(id));
    const Experiment before = *p;
    Experiment e = before;
    e.status = ExperimentStatus::Rejected;
    e.failure = reason.isEmpty() ? QStringLiteral("rejected in review") : reason;
    e.finished = QDateTime::currentDateTimeUtc();
    e.commit = finalCommit(e, error);
    if (e.commit.isEmpty())
        return false;
    LogEntry line;
    line.action = QStringLiteral("reject");
    line.experiment = e;
    if (!appendLog(line, error))
        return false;
    exportRow(before, e);
    return true;
}

bool RunStore::moveHead(const QString &kernel, const QString &commit, QString *error)
{
    const QString ref = QStringLiteral("refs/heads/kernels/") + kernel;
    if (m_repo->resolveRef(ref) != commit && !m_repo->setRef(ref, commit, QStringLiteral("head"), error))
        return false;
    const QString blob = m_repo->blobIdAt(commit, kernelPath(kernel));
    if (blob.isEmpty())
        return fail(error, QStringLiteral("%1 missing at %2").arg(kernelPath(kernel), commit));
    // The working tree shows each kernel's head, so `git status` stays clean and a user can look.
    const QString file = path(kernelPath(kernel));
    const QByteArray content = m_repo->readBlobById(blob, error);
    QFile current(file);
    const bool same = current.open(QIODevice::ReadOnly) && current.readAll() == content;
    if (!same && !AtomicFile::write(file, content, error))
        return false;
    if (m_headBlob.value(kernel) == blob && !m_repo->resolveRef(QStringLiteral("refs/heads/best")).isEmpty())
        return true;
    m_headBlob.insert(kernel, blob);
    return updateBest(commit, QStringLiteral("Best: %1 at %2").arg(kernel, commit.left(10)), error);
}

bool RunStore::updateBest(const QString &changedHead, const QString &why, QString *error)
{
    QMap<QString, QString> files = m_rootFiles;
    for (auto it = m_headBlob.cbegin(); it != m_headBlob.cend(); ++it)
        files.insert(kernelPath(it.key()), it.value());
    const QString tree = m_repo->writeTree(files, error);
    if (tree.isEmpty())
        return false;
    const QString previous = m_repo->resolveRef(QStringLiteral("refs/heads/best"));
    if (!previous.isEmpty() && m_repo->treeOf(previous) == tree) {
        m_state.bestCommit = previous;
        return true;
    }
    // First parent: the previous best state; second: the kernel head that changed it. So
    // `git log --first-parent best` is the history of the combined best.
    QStringList parents;
    if (!previous.isEmpty())
        parents << previous;
    if (!changedHead.isEmpty() && !parents.contains(changedHead))
        parents << changedHead;
    const QString commit
        = m_repo->writeCommit(tree, parents, why + QLatin1Char('\n'), QDateTime::currentDateTimeUtc(), error);
    if (commit.isEmpty() || !m_repo->setRef(QStringLiteral("refs/heads/best"), commit, why, error)
        || !m_repo->resetIndex(tree, error))
        return false;
    m_state.bestCommit = commit;
    return true;
}

void RunStore::exportRow(const Experiment &before, const Experiment &after)
{
    if (!ResultsTsv::isExported(after))
        return;
    // A re-measured baseline changes a row already exported: rewrite instead of appending twice.
    if (ResultsTsv::isExported(before)) {
        rewriteResults(nullptr);
        return;
    }
    const KernelRecord *k = m_state.kernel(after.kernel);
    AtomicFile::append(
        path(ResultsTsv::fileName()), ResultsTsv::row(after, k ? k->opType : QString()), nullptr);
}

bool RunStore::rewriteResults(QString *error)
{
    return AtomicFile::write(
        path(ResultsTsv::fileName()), ResultsTsv::render(m_state.experiments, m_state.kernels), error);
}

QByteArray RunStore::kernelSource(const QString &kernel, QString *error) const
{
    const KernelRecord *k = m_state.kernel(KernelRecord::keyOf(kernel));
    if (!k) {
        fail(error, QStringLiteral("unknown kernel \"%1\"").arg(kernel));
        return QByteArray();
    }
    return m_repo->readBlob(k->head, kernelPath(KernelRecord::keyOf(kernel)), error);
}

QString RunStore::bestCommit() const
{
    return m_state.bestCommit;
}

QString RunStore::readOnlyReason(const QString &dir)
{
    QFile f(QDir(dir).filePath(QLatin1String(ReadOnlyMarker)));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray data = f.readAll();
    const json marker = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    const QString why = jsonfield::text(marker, "why");
    // A marker that cannot be read still marks the run: it was written to keep writers out.
    return why.isEmpty() ? QStringLiteral("it is marked read-only (%1)").arg(QLatin1String(ReadOnlyMarker))
                         : why;
}

bool RunStore::markReadOnly(const QString &dir, const QString &why, QString *error)
{
    const json marker { { "why", why.toStdString() } };
    return AtomicFile::write(
        QDir(dir).filePath(QLatin1String(ReadOnlyMarker)), QByteArray::fromStdString(marker.dump(1)), error);
}

int RunStore::applyRequests(QStringList *errors)
{
    const QDir d(RequestQueue::dir(m_dir));
    if (!d.exists())
        return 0;
    int applied = 0;
    const QStringList files = d.entryList({ QStringLiteral("*.json") }, QDir::Files, QDir::Name);
    for (const QString &file : files) {
        QFile f(d.filePath(file));
        QString why;
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray data = f.readAll();
        const json request = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
        SteerRequest r;
        QString done;
        bool ok = false;
        if (request.is_discarded())
            why = QStringLiteral("not JSON");
        else if (SteerRequest::fromJson(request, &r, &why)) {
            try {
                Experiment created;
                ok = apply(r, &why, &created);
                if (ok) {
                    ++applied;
                    done = r.appliedText(created, m_state.config.moveOn);
                }
            } catch (const std::exception &ex) {
                ok = false;
                why = QString::fromUtf8(ex.what());
            }
        }
        if (!ok && why.isEmpty())
            why = QStringLiteral("not applied");
        if (!ok && errors)
            *errors << QStringLiteral("request %1: %2").arg(file, why);
        RequestQueue::recordOutcome(m_dir, file, ok, ok ? done : why);
        QFile::remove(d.filePath(file));
    }
    RequestQueue::pruneOutcomes(m_dir);
    return applied;
}

bool RunStore::apply(const SteerRequest &r, QString *error, Experiment *created)
{
    using Action = SteerRequest::Action;
    switch (r.action()) {
    case Action::Pin:
        return pin(r.kernel(), r.reason(), error);
    case Action::Unpin:
        return unpin(r.kernel(), error);
    case Action::Skip:
        return skip(r.kernel(), r.reason(), error);
    case Action::Unskip:
        return unskip(r.kernel(), error);
    case Action::Revert: {
        const Experiment e = revert(r.kernel(), r.experiment(), error);
        if (created)
            *created = e;
        return e.id != 0;
    }
    case Action::Accept:
        return accept(r.experiment(), error);
    case Action::Reject:
        return reject(r.experiment(), r.reason(), error);
    case Action::Review:
        return setReviewMode(r.on(), error);
    case Action::Verification:
        if (!r.value().is_object())
            return fail(error, QStringLiteral("verification: \"value\" must be the verification object"));
        return writeVerification(r.value(), error);
    case Action::MoveOn: {
        if (!r.value().is_object())
            return fail(error, QStringLiteral("move_on: \"value\" must be an object of move-on rules"));
        // The fields given replace those of the current rules; the others stay.
        json merged = json::parse(m_state.config.moveOn.toJson().toStdString());
        merged.update(r.value());
        MoveOnRules rules;
        if (!MoveOnRules::fromJson(QByteArray::fromStdString(merged.dump()), &rules, error))
            return false;
        return setMoveOnRules(rules, error, r.by());
    }
    }
    return fail(error, QStringLiteral("unknown action \"%1\"").arg(r.actionName()));
}

// run.json with one top-level section replaced: written to disk and as a blob, the state reloaded,
// and the change committed with `why` as its line (the two settings writers above).
bool RunStore::writeRunJsonSection(const QByteArray &before, const char *section, const nlohmann::json &value,
    const QString &why, QString *error)
{
    const QByteArray after = RunConfig::withSection(before, section, value, error);
    if (after.isEmpty())
        return false;
    const QString blob = m_repo->writeBlob(after, error);
    if (blob.isEmpty() || !AtomicFile::write(path(QStringLiteral("run.json")), after, error))
        return false;
    RunLoader::setRunJson(m_state, after, nullptr);
    m_rootFiles.insert(QStringLiteral("run.json"), blob);
    return updateBest(QString(), why, error);
}

} // namespace ak
