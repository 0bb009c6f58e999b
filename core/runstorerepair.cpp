// RunStore: opening an existing run and repairing it after an interrupted writer.
#include "errorout.h"
#include "runstore.h"

#include "atomicfile.h"
#include "experimentlog.h"
#include "gitrepo.h"
#include "resultstsv.h"
#include "runloader.h"
#include "runlock.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <unistd.h>

using nlohmann::json;

namespace ak {

namespace {

// "Key: value" trailers of a commit message written by commitMessage().
QString trailer(const QString &message, const QString &key)
{
    const QString prefix = key + QStringLiteral(": ");
    const auto lines = QStringView(message).split(QLatin1Char('\n'));
    for (const auto &line : lines)
        if (line.startsWith(prefix))
            return line.mid(prefix.size()).toString();
    return QString();
}

} // namespace

std::unique_ptr<RunStore> RunStore::open(const QString &dir, QString *error)
{
    if (!QFileInfo(QDir(dir).filePath(QStringLiteral("run.json"))).isFile())
        return fail(error, QStringLiteral("%1: not a run directory (no run.json)").arg(dir)), nullptr;
    if (const QString why = readOnlyReason(dir); !why.isEmpty())
        return fail(error, QStringLiteral("%1 is read-only: %2").arg(dir, why)), nullptr;
    std::unique_ptr<RunStore> store = locked(dir, GitRepo::open(dir, error, GitRepo::Purpose::Write), error);
    if (!store || !store->load(error))
        return nullptr;
    store->repair();
    store->applyRequests(&store->m_repairNotes);
    return store;
}

void RunStore::removeStaleGitLocks()
{
    // libgit2 updates a ref by creating <ref>.lock and renaming it; a writer killed in between leaves
    // the .lock behind and every later update of that ref fails. We hold the run's single-writer
    // lock, so no other writer of ours can own one of these.
    const QDir git(path(QStringLiteral(".git")));
    QStringList stale;
    for (const QString &name : git.entryList({ QStringLiteral("*.lock") }, QDir::Files))
        if (name != QLatin1String("autokernel.lock"))
            stale << git.filePath(name);
    for (const QString &sub : { QStringLiteral("refs"), QStringLiteral("logs") }) {
        QDirIterator it(
            git.filePath(sub), { QStringLiteral("*.lock") }, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            stale << it.next();
    }
    for (const QString &file : std::as_const(stale))
        if (QFile::remove(file))
            m_repairNotes << QStringLiteral("%1: removed a stale git lock").arg(git.relativeFilePath(file));
}

bool RunStore::load(QString *error)
{
    removeStaleGitLocks();
    for (const QString &name : { QStringLiteral("run.json"), QStringLiteral("profile.json"),
             QStringLiteral("verification.json"), InModelChecks::fileName(), QStringLiteral(".gitignore") }) {
        QFile f(path(name));
        if (!f.exists())
            continue;
        if (!f.open(QIODevice::ReadOnly))
            return fail(error, QStringLiteral("%1: %2").arg(f.fileName(), f.errorString()));
        const QByteArray data = f.readAll();
        if (name == QLatin1String("run.json")) {
            QString why;
            if (!RunLoader::applyRunJson(m_state, data, &why))
                m_state.warnings << why;
        }
        if (name == InModelChecks::fileName())
            m_state.inModel = InModelChecks::parse(data, name, &m_state.warnings);
        const QString blob = m_repo->writeBlob(data, error);
        if (blob.isEmpty())
            return false;
        m_rootFiles.insert(name, blob);
    }

    const QString logPath = path(ExperimentLog::fileName());
    QFile logFile(logPath);
    QByteArray data;
    if (logFile.exists()) {
        if (!logFile.open(QIODevice::ReadWrite))
            return fail(error, QStringLiteral("%1: %2").arg(logPath, logFile.errorString()));
        data = logFile.readAll();
    }
    ExperimentLog::ReadResult log = ExperimentLog::parse(data, ExperimentLog::fileName());
    if (log.partialTail) {
        // A record torn by a kill: its operation never reached its commit point, so dropping the
        // fragment loses nothing that was acknowledged. The next append must start on a fresh line.
        const qint64 torn = data.size() - log.completeBytes;
        if (!logFile.resize(log.completeBytes) || !logFile.flush())
            return fail(error,
                QStringLiteral("%1: cannot truncate a torn record: %2").arg(logPath, logFile.errorString()));
        ::fsync(logFile.handle());
        m_repairNotes << QStringLiteral("%1: removed an incomplete last record (%2 bytes)")
                             .arg(ExperimentLog::fileName())
                             .arg(torn);
    }
    m_lineCount = int(QByteArrayView(data.constData(), log.completeBytes).count('\n'));
    m_state.warnings << log.errors;
    for (const LogEntry &e : log.entries)
        RunLoader::apply(m_state, e);
    RunLoader::finish(m_state);

    int maxId = m_state.experiments.isEmpty() ? 0 : m_state.experiments.constLast().id;
    for (const QString &ref : m_repo->listRefs(QStringLiteral("refs/experiments/*")))
        maxId = std::max(maxId, ref.section(QLatin1Char('/'), -1).toInt());
    m_nextId = maxId + 1;
    return true;
}

void RunStore::repair()
{
    // 1. Experiment commits whose log line never made it (killed between the ref and the append).
    recoverUnloggedExperiments();
    // 2. Experiments that were running when the writer died.
    markInterruptedExperiments();
    // 3. Derived state follows the log: run.json, branch refs, working-tree files, then one best commit.
    repairRunJson();
    repairKernelHeads();
    repairBest();
    // 4. results.tsv is an export: rewrite it when its row count disagrees with the log.
    repairResultsTsv();
}

void RunStore::recoverUnloggedExperiments()
{
    QString why;
    const QStringList refs = m_repo->listRefs(QStringLiteral("refs/experiments/*"));
    for (const QString &ref : refs) {
        const int id = ref.section(QLatin1Char('/'), -1).toInt();
        if (id <= 0 || m_state.experiment(id))
            continue;
        const QString commit = m_repo->resolveRef(ref);
        const QString message = m_repo->messageOf(commit);
        Experiment e;
        e.id = id;
        e.kernel = trailer(message, QStringLiteral("Kernel"));
        e.agent = trailer(message, QStringLiteral("Agent"));
        e.description = message.section(QLatin1Char('\n'), 0, 0);
        e.commit = commit;
        e.parent = m_repo->parentsOf(commit).value(0);
        e.started = m_repo->timeOf(commit);
        const KernelRecord *k = m_state.kernel(e.kernel);
        if (!k) {
            m_repairNotes << QStringLiteral("%1: kernel \"%2\" was never added; commit left unlogged")
                                 .arg(ref, e.kernel);
            continue;
        }
        LogEntry line;
        line.action = QStringLiteral("repair");
        if (trailer(message, QStringLiteral("Outcome")) == QLatin1String("baseline") && k->head.isEmpty()) {
            e.status = ExperimentStatus::Baseline; // addKernel interrupted after its kernel line
            e.metrics.correct = true;
            line.head = commit;
        } else {
            e.status = ExperimentStatus::Running;
        }
        line.experiment = e;
        if (appendLog(line, &why))
            m_repairNotes << QStringLiteral("experiment %1: recovered from %2").arg(id).arg(ref);
        else
            m_repairNotes << QStringLiteral("experiment %1: %2").arg(id).arg(why);
    }
}

// A running experiment outlived by its writer crashed: its final commit and log line say so.
void RunStore::markInterruptedExperiments()
{
    QString why;
    QVector<Experiment> running;
    for (const Experiment &e : std::as_const(m_state.experiments))
        if (e.status == ExperimentStatus::Running)
            running << e;
    for (Experiment e : running) {
        const Experiment before = e;
        e.status = ExperimentStatus::Crashed;
        e.failure = QStringLiteral("interrupted: the writer stopped before this experiment finished");
        e.finished = QDateTime::currentDateTimeUtc();
        e.commit = finalCommit(e, &why);
        if (e.commit.isEmpty())
            e.commit = before.commit;
        LogEntry line;
        line.action = QStringLiteral("repair");
        line.experiment = e;
        if (appendLog(line, &why)) {
            exportRow(before, e);
            m_repairNotes << QStringLiteral("experiment %1: interrupted, marked crash").arg(e.id);
        } else {
            m_repairNotes << QStringLiteral("experiment %1: %2").arg(e.id).arg(why);
        }
    }
}

// Each kernel's branch ref and working-tree kernel.py as the log's head says.
void RunStore::repairKernelHeads()
{
    QString why;
    for (const KernelRecord &k : std::as_const(m_state.kernels)) {
        const QString name = KernelRecord::keyOf(k.folder);
        if (k.head.isEmpty()) {
            m_repairNotes << QStringLiteral("kernel %1 has no baseline commit").arg(name);
            continue;
        }
        const QString ref = QStringLiteral("refs/heads/kernels/") + name;
        if (m_repo->resolveRef(ref) != k.head) {
            m_repo->setRef(ref, k.head, QStringLiteral("repair"), &why);
            m_repairNotes << QStringLiteral("%1: moved to the head recorded in the log").arg(ref);
        }
        const QString blob = m_repo->blobIdAt(k.head, kernelPath(name));
        m_headBlob.insert(name, blob);
        const QByteArray content = m_repo->readBlobById(blob, nullptr);
        QFile current(path(kernelPath(name)));
        if (!(current.open(QIODevice::ReadOnly) && current.readAll() == content)) {
            AtomicFile::write(path(kernelPath(name)), content, &why);
            m_repairNotes << QStringLiteral("%1: restored from its head").arg(kernelPath(name));
        }
    }
}

void RunStore::repairBest()
{
    QString why;
    const QString best = m_repo->resolveRef(QStringLiteral("refs/heads/best"));
    if (!updateBest(QString(), QStringLiteral("Repair: best recombined from the kernel heads"), &why))
        m_repairNotes << QStringLiteral("refs/heads/best: %1").arg(why);
    else if (best != m_state.bestCommit)
        m_repairNotes << QStringLiteral("refs/heads/best: recombined from the kernel heads");
}

void RunStore::repairResultsTsv()
{
    QString why;
    int exported = 0;
    for (const Experiment &e : std::as_const(m_state.experiments))
        exported += ResultsTsv::isExported(e) ? 1 : 0;
    QFile tsv(path(ResultsTsv::fileName()));
    const int rows = tsv.open(QIODevice::ReadOnly) ? int(tsv.readAll().count('\n')) - 1 : -1;
    if (rows != exported && rewriteResults(&why))
        m_repairNotes << QStringLiteral("%1: rewritten from the log").arg(ResultsTsv::fileName());
}

void RunStore::repairRunJson()
{
    // load() read run.json, then RunLoader::apply gave a logged move-on change that run.json does not
    // show yet (the writer was killed between the line and the file) its rules: write them down.
    QFile f(path(QStringLiteral("run.json")));
    if (!f.open(QIODevice::ReadOnly))
        return;
    const QByteArray disk = f.readAll();
    f.close();
    if (m_state.runJson.isEmpty() || m_state.runJson == disk)
        return;
    QString why;
    const QString blob = m_repo->writeBlob(m_state.runJson, &why);
    if (blob.isEmpty() || !AtomicFile::write(path(QStringLiteral("run.json")), m_state.runJson, &why)) {
        m_repairNotes << QStringLiteral("run.json: %1").arg(why);
        return;
    }
    m_rootFiles.insert(QStringLiteral("run.json"), blob);
    const int line = m_state.moveOnChanges.isEmpty() ? 0 : m_state.moveOnChanges.constLast().line;
    m_repairNotes << QStringLiteral("run.json: move-on rules of %1:%2 written (the change was interrupted)")
                         .arg(ExperimentLog::fileName())
                         .arg(line);
}

} // namespace ak
