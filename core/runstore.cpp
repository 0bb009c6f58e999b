#include "runstore.h"
#include "errorout.h"

#include "atomicfile.h"
#include "experimentlog.h"
#include "gitrepo.h"
#include "resultstsv.h"
#include "runconfig.h"
#include "runloader.h"
#include "runlock.h"
#include "secrets.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSysInfo>

using nlohmann::json;

namespace ak {

namespace {

QString sanitizeName(const QString &name)
{
    QString s = name;
    s.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.]+")), QStringLiteral("_"));
    while (s.startsWith(QLatin1Char('.')) || s.startsWith(QLatin1Char('_')))
        s.remove(0, 1);
    s = s.left(48);
    return s.isEmpty() ? QStringLiteral("kernel") : s;
}

} // namespace

RunStore::RunStore(const QString &dir, std::unique_ptr<GitRepo> repo, std::unique_ptr<RunLock> lock)
    : m_dir(QDir(dir).absolutePath())
    , m_repo(std::move(repo))
    , m_lock(std::move(lock))
{
    m_state.runDir = m_dir;
}

RunStore::~RunStore() = default;

QString RunStore::path(const QString &name) const
{
    return QDir(m_dir).filePath(name);
}

QString RunStore::author()
{
    QString user = qEnvironmentVariable("USER");
    if (user.isEmpty())
        user = qEnvironmentVariable("USERNAME", QStringLiteral("someone"));
    const QString program = QCoreApplication::applicationName().isEmpty()
        ? QStringLiteral("a program")
        : QCoreApplication::applicationName();
    return QStringLiteral("%1@%2 via %3 (pid %4)")
        .arg(user, QSysInfo::machineHostName(), program)
        .arg(QCoreApplication::applicationPid());
}

std::unique_ptr<RunStore> RunStore::locked(const QString &dir, std::unique_ptr<GitRepo> repo, QString *error)
{
    if (!repo)
        return nullptr; // `error` says why it did not open
    auto lock = std::make_unique<RunLock>(dir);
    if (!lock->acquire(error))
        return nullptr;
    return std::unique_ptr<RunStore>(new RunStore(dir, std::move(repo), std::move(lock)));
}

std::unique_ptr<RunStore> RunStore::create(const QString &dir, const json &runConfig, QString *error)
{
    if (!runConfig.is_object())
        return fail(error, QStringLiteral("run configuration must be a JSON object")), nullptr;
    const QDir d(dir);
    if (QFileInfo::exists(d.filePath(QStringLiteral("run.json")))
        || QFileInfo::exists(d.filePath(QStringLiteral(".git"))))
        return fail(error, QStringLiteral("%1: already holds a run or a git repository").arg(dir)), nullptr;
    if (!QDir().mkpath(dir))
        return fail(error, QStringLiteral("%1: cannot create the folder").arg(dir)), nullptr;
    std::unique_ptr<RunStore> store = locked(dir, GitRepo::init(dir, error), error);
    if (!store)
        return nullptr;

    QStringList removed;
    json config = RunConfig::stripSecrets(runConfig, &removed);
    store->m_strippedKeys = removed;
    config["format"] = 1;
    if (!config.contains("created"))
        config["created"] = ExperimentLog::timeText(QDateTime::currentDateTimeUtc()).toStdString();
    const QByteArray runJson = QByteArray::fromStdString(config.dump(2)) + '\n';
    const QByteArray ignore
        = "# written by AutoKernel Studio: the log and its export live beside the commits\n"
          "experiments.jsonl\nresults.tsv\n";
    if (!AtomicFile::write(store->path(QStringLiteral("run.json")), runJson, error)
        || !AtomicFile::write(store->path(QStringLiteral(".gitignore")), ignore, error)
        || !AtomicFile::write(store->path(ExperimentLog::fileName()), QByteArray(), error)
        || !AtomicFile::write(store->path(ResultsTsv::fileName()), ResultsTsv::header(), error))
        return nullptr;
    store->m_rootFiles.insert(QStringLiteral("run.json"), store->m_repo->writeBlob(runJson, error));
    store->m_rootFiles.insert(QStringLiteral(".gitignore"), store->m_repo->writeBlob(ignore, error));
    RunLoader::applyRunJson(store->m_state, runJson, nullptr);
    if (!store->updateBest(QString(), QStringLiteral("Create run"), error)
        || !store->m_repo->setHeadSymbolic(QStringLiteral("refs/heads/best"), error))
        return nullptr;
    return store;
}

bool RunStore::appendLog(LogEntry &entry, QString *error)
{
    if (!entry.time.isValid())
        entry.time = QDateTime::currentDateTimeUtc();
    if (!ExperimentLog::append(path(ExperimentLog::fileName()), entry, error))
        return false;
    entry.line = ++m_lineCount;
    RunLoader::apply(m_state, entry);
    return true;
}

KernelRecord *RunStore::findKernel(const QString &kernel, QString *error)
{
    const auto it = m_state.kernelIndex.constFind(KernelRecord::keyOf(kernel));
    if (it == m_state.kernelIndex.constEnd()) {
        fail(error, QStringLiteral("unknown kernel \"%1\"").arg(kernel));
        return nullptr;
    }
    return &m_state.kernels[*it];
}

QString RunStore::commitMessage(const Experiment &e)
{
    const QString subject = e.description.simplified().isEmpty() ? QStringLiteral("(no description)")
                                                                 : e.description.simplified();
    return subject
        + QStringLiteral("\n\nExperiment: %1\nKernel: %2\nAgent: %3\nOutcome: %4\n")
              .arg(e.id)
              .arg(e.kernel, e.agent.isEmpty() ? QStringLiteral("unknown") : e.agent, statusName(e.status));
}

bool RunStore::writeRootFile(
    const QString &name, const json &content, const QString &action, const QString &why, QString *error)
{
    const QByteArray data = QByteArray::fromStdString(content.dump(2)) + '\n';
    if (!AtomicFile::write(path(name), data, error))
        return false;
    const QString blob = m_repo->writeBlob(data, error);
    if (blob.isEmpty())
        return false;
    LogEntry e;
    e.type = LogEntry::Type::Run;
    e.action = action;
    if (!appendLog(e, error))
        return false;
    m_rootFiles.insert(name, blob);
    return updateBest(QString(), why, error);
}

bool RunStore::writeProfile(const json &profile, QString *error)
{
    return writeRootFile(
        QStringLiteral("profile.json"), profile, QStringLiteral("profile"), QStringLiteral("Profile"), error);
}

bool RunStore::writeVerification(const json &verification, QString *error)
{
    const double speedup = verification.value("model_speedup", 0.0);
    const int kernels = verification.contains("final_set") ? int(verification["final_set"].size()) : 0;
    return writeRootFile(QStringLiteral("verification.json"), verification, QStringLiteral("verification"),
        QStringLiteral("Verification: model %1x, %2 kernel(s) in the final set")
            .arg(speedup, 0, 'f', 3)
            .arg(kernels),
        error);
}

bool RunStore::recordInModelCheck(const InModelCheck &check, QString *error)
{
    InModelChecks all = m_state.inModel;
    all.checks.push_back(check);
    const QString why = std::isfinite(check.effectPct)
        ? QStringLiteral("In-model check of %1: %2%3% alone vs eager")
              .arg(check.kernel, check.effectPct >= 0 ? QStringLiteral("+") : QString())
              .arg(check.effectPct, 0, 'f', 2)
        : QStringLiteral("In-model check of %1: %2").arg(check.kernel, check.why);
    if (!writeRootFile(InModelChecks::fileName(), all.toJson(), QStringLiteral("inmodel"), why, error))
        return false;
    m_state.inModel = all;
    return true;
}

Experiment RunStore::addKernel(const KernelRecord &k, const QByteArray &kernelPy, QString *error)
{
    const QString name = k.folder.isEmpty()
        ? QStringLiteral("%1-%2").arg(k.rank, 2, 10, QLatin1Char('0')).arg(sanitizeName(k.name))
        : KernelRecord::keyOf(k.folder);
    if (!QRegularExpression(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.-]*$")).match(name).hasMatch()
        || name.contains(QLatin1String("..")))
        return fail(error, QStringLiteral("invalid kernel folder name \"%1\"").arg(name)), Experiment();
    if (m_state.kernelIndex.contains(name))
        return fail(error, QStringLiteral("kernel %1 already exists").arg(name)), Experiment();

    Experiment base;
    base.id = m_nextId;
    base.kernel = name;
    base.agent = QStringLiteral("baseline");
    base.description = QStringLiteral("Baseline of %1").arg(k.name.isEmpty() ? name : k.name);
    base.status = ExperimentStatus::Baseline;
    base.started = QDateTime::currentDateTimeUtc();
    base.metrics.correct = true;
    const QString blob = m_repo->writeBlob(kernelPy, error);
    const QString tree
        = blob.isEmpty() ? QString() : m_repo->writeTree({ { kernelPath(name), blob } }, error);
    base.commit = tree.isEmpty() ? QString()
                                 : m_repo->writeCommit(tree, {}, commitMessage(base), base.started, error);
    if (base.commit.isEmpty()
        || !m_repo->setRef(QStringLiteral("refs/experiments/%1").arg(base.id), base.commit,
            QStringLiteral("baseline"), error))
        return Experiment();
    ++m_nextId;

    LogEntry add;
    add.type = LogEntry::Type::Kernel;
    add.action = QStringLiteral("add");
    add.kernel = name;
    add.record = k;
    add.record.folder = QStringLiteral("kernels/") + name;
    LogEntry line;
    line.action = QStringLiteral("baseline");
    line.experiment = base;
    line.head = base.commit;
    if (!appendLog(add, error) || !appendLog(line, error))
        return Experiment();
    if (!moveHead(name, base.commit, error))
        return Experiment();
    return base;
}

Experiment RunStore::beginExperiment(const QString &kernel, const QByteArray &kernelPy, const QString &agent,
    const QString &description, QString *error, double agentSeconds)
{
    Experiment draft;
    draft.agent = agent;
    draft.description = description;
    draft.agentSeconds = agentSeconds;
    return beginExperiment(kernel, kernelPy, draft, error);
}

Experiment RunStore::beginExperiment(
    const QString &kernel, const QByteArray &kernelPy, const Experiment &draft, QString *error)
{
    const KernelRecord *k = findKernel(kernel, error);
    if (!k)
        return Experiment();
    if (k->state == KernelState::Pinned)
        return fail(error, QStringLiteral("kernel %1 is pinned: its best is locked").arg(kernel)),
               Experiment();
    Experiment e;
    e.id = m_nextId;
    e.kernel = KernelRecord::keyOf(kernel);
    e.parent = k->head;
    e.agent = draft.agent;
    e.description = draft.description.simplified();
    e.status = ExperimentStatus::Running;
    e.started = QDateTime::currentDateTimeUtc();
    e.agentSeconds = draft.agentSeconds;
    e.tokensIn = draft.tokensIn;
    e.tokensOut = draft.tokensOut;
    e.cost = draft.cost;
    const QString blob = m_repo->writeBlob(kernelPy, error);
    const QString tree
        = blob.isEmpty() ? QString() : m_repo->writeTree({ { kernelPath(e.kernel), blob } }, error);
    const QStringList parents = e.parent.isEmpty() ? QStringList() : QStringList { e.parent };
    e.commit
        = tree.isEmpty() ? QString() : m_repo->writeCommit(tree, parents, commitMessage(e), e.started, error);
    if (e.commit.isEmpty()
        || !m_repo->setRef(
            QStringLiteral("refs/experiments/%1").arg(e.id), e.commit, QStringLiteral("begin"), error))
        return Experiment();
    ++m_nextId;
    LogEntry line;
    line.action = QStringLiteral("begin");
    line.experiment = e;
    if (!appendLog(line, error))
        return Experiment();
    return e;
}

bool RunStore::attachReply(int id, const QString &reply, QString *error)
{
    if (!m_state.experiment(id))
        return fail(error, QStringLiteral("unknown experiment %1").arg(id));
    if (reply.isEmpty())
        return true;
    QByteArray text = secrets::redact(reply).toUtf8();
    if (text.size() > MaxReplyBytes) {
        const int tail = MaxReplyBytes / 4;
        const QByteArray cut
            = QStringLiteral("\n\n[... %1 bytes left out: replies are kept up to %2 bytes ...]\n\n")
                  .arg(text.size() - MaxReplyBytes)
                  .arg(MaxReplyBytes)
                  .toUtf8();
        text = text.left(MaxReplyBytes - tail) + cut + text.right(tail);
    }
    const QString blob = m_repo->writeBlob(text, error);
    return !blob.isEmpty() && m_repo->setRef(replyRef(id), blob, QStringLiteral("reply"), error);
}

QString RunStore::replyRef(int id)
{
    return QLatin1String(GitRepo::BlobRefPrefix) + QString::number(id);
}

QByteArray RunStore::readReply(const QString &dir, int id, QString *error)
{
    const auto repo = GitRepo::open(dir, error);
    if (!repo)
        return {};
    const QString blob = repo->resolveRef(replyRef(id));
    return blob.isEmpty() ? QByteArray() : repo->readBlobById(blob, error);
}

QString RunStore::finalCommit(const Experiment &e, QString *error)
{
    const QString tree = m_repo->treeOf(e.commit);
    if (tree.isEmpty())
        return fail(error, QStringLiteral("experiment %1: commit %2 is missing").arg(e.id).arg(e.commit)),
               QString();
    const QStringList parents = e.parent.isEmpty() ? QStringList() : QStringList { e.parent };
    const QString commit = m_repo->writeCommit(tree, parents, commitMessage(e), e.finished, error);
    if (commit.isEmpty()
        || !m_repo->setRef(
            QStringLiteral("refs/experiments/%1").arg(e.id), commit, statusName(e.status), error))
        return QString();
    return commit;
}

bool RunStore::finishExperiment(int id, ExperimentStatus status, const Metrics &metrics,
    const QString &failure, QString *error, double benchSeconds)
{
    const Experiment *found = m_state.experiment(id);
    if (!found)
        return fail(error, QStringLiteral("unknown experiment %1").arg(id));
    const Experiment before = *found;
    const bool baselineMetrics
        = before.status == ExperimentStatus::Baseline && status == ExperimentStatus::Baseline;
    if (before.status != ExperimentStatus::Running && !baselineMetrics)
        return fail(error,
            QStringLiteral("experiment %1 is already finished (%2)").arg(id).arg(statusText(before.status)));
    if (status == ExperimentStatus::Running || status == ExperimentStatus::Rejected
        || (status == ExperimentStatus::Baseline && !baselineMetrics))
        return fail(
            error, QStringLiteral("experiment %1 cannot finish as %2").arg(id).arg(statusText(status)));

    Experiment e = before;
    e.status = (status == ExperimentStatus::Kept && m_state.reviewMode) ? ExperimentStatus::Pending : status;
    e.metrics = metrics;
    e.failure = failure;
    e.finished = QDateTime::currentDateTimeUtc();
    e.benchSeconds = benchSeconds >= 0 ? benchSeconds
        : e.started.isValid()          ? e.started.msecsTo(e.finished) / 1000.0
                                       : 0;
    if (!baselineMetrics) {
        e.commit = finalCommit(e, error);
        if (e.commit.isEmpty())
            return false;
    }
    LogEntry line;
    line.action = baselineMetrics ? QStringLiteral("baseline") : QStringLiteral("finish");
    line.experiment = e;
    if (e.status == ExperimentStatus::Kept)
        line.head = e.commit;
    if (!appendLog(line, error))
        return false;
    exportRow(before, e);
    return e.status != ExperimentStatus::Kept || moveHead(e.kernel, e.commit, error);
}

} // namespace ak
