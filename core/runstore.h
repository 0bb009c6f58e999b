#pragma once

#include "experiment.h"
#include "kernelrecord.h"
#include "moveonrules.h"
#include "runsnapshot.h"

#include <nlohmann/json.hpp>

#include <QByteArray>
#include <QHash>
#include <QMap>
#include <QString>
#include <QStringList>

#include <memory>

namespace ak {

class GitRepo;
class RunLock;
class SteerRequest;
struct LogEntry;

// The writer of a run directory (format: docs/run-format.md). Holds the single-writer lock for its
// lifetime. Every operation has one durable commit point, the fsynced append of its line to
// experiments.jsonl; git objects are written before it and derived state (branch refs, the best
// commit, the working-tree kernel.py, results.tsv) after it, so open() can always rebuild the
// derived state from the log. Not thread-safe: use from one thread.
class RunStore
{
public:
    ~RunStore();
    RunStore(const RunStore &) = delete;
    RunStore &operator=(const RunStore &) = delete;

    // Creates a new run in `dir` (which may exist but must not already hold a run). Keys that look
    // like secrets (api_key, *_token, *secret*, password) are removed from `runConfig` before it
    // reaches disk; strippedKeys() names them.
    static std::unique_ptr<RunStore> create(
        const QString &dir, const nlohmann::json &runConfig, QString *error);
    // Opens an existing run for writing: takes the lock, then repairs (see repairNotes()).
    static std::unique_ptr<RunStore> open(const QString &dir, QString *error);

    // A run nobody may write: a recording shipped with the app and extracted as an example is the
    // same for every user who opens it, so open() and RequestQueue::queue() refuse it, naming why and
    // what to do instead (`autokernel-cli restore` elsewhere gives a run to continue). The marker holds
    // {"why": ...}; readOnlyReason is empty for an ordinary run.
    static constexpr const char *ReadOnlyMarker = ".git/autokernel-read-only.json";
    static QString readOnlyReason(const QString &dir);
    static bool markReadOnly(const QString &dir, const QString &why, QString *error);

    QString dir() const { return m_dir; }
    // The writer's current view of the run (same shape the loader builds).
    const RunSnapshot &state() const { return m_state; }
    RunSnapshotPtr snapshot() const { return std::make_shared<const RunSnapshot>(m_state); }
    QStringList repairNotes() const { return m_repairNotes; }
    QStringList strippedKeys() const { return m_strippedKeys; }
    GitRepo &repo() { return *m_repo; }

    bool writeProfile(const nlohmann::json &profile, QString *error = nullptr);
    // Writes verification.json (autokernel-cli verify) and commits it on the best branch, so every
    // verification stays in the run's history and can be compared with the earlier ones.
    bool writeVerification(const nlohmann::json &verification, QString *error = nullptr);
    // Appends one in-model check of a keep to inmodel.json (and state().inModel), logged as the run
    // action "inmodel" and committed on the best branch like verification.json.
    bool recordInModelCheck(const InModelCheck &check, QString *error = nullptr);
    // Creates kernels/<NN>-<name>/kernel.py (folder from k.folder, else rank and name) with a baseline
    // commit on refs/heads/kernels/<NN>-<name>. Returns the baseline experiment (id 0 on error); its
    // metrics are recorded later with finishExperiment(id, Baseline, metrics, {}).
    Experiment addKernel(const KernelRecord &k, const QByteArray &kernelPy, QString *error = nullptr);

    // Commits kernelPy on top of the kernel's head (refs/experiments/<id>), logs it as running.
    // Refused for a pinned kernel. Returns id 0 on error.
    Experiment beginExperiment(const QString &kernel, const QByteArray &kernelPy, const QString &agent,
        const QString &description, QString *error = nullptr, double agentSeconds = 0);
    // The same, taking agent, description, agentSeconds and the token/cost fields from `draft`.
    Experiment beginExperiment(
        const QString &kernel, const QByteArray &kernelPy, const Experiment &draft, QString *error = nullptr);
    // Keep advances the kernel's branch (in review mode it becomes Pending instead); any other
    // outcome leaves the branch and keeps the commit reachable under refs/experiments/<id>.
    // `benchSeconds`: how long the bench took, when the caller measured it; otherwise the time since
    // the experiment began (a baseline begins when its kernel is added, long before its bench).
    bool finishExperiment(int id, ExperimentStatus status, const Metrics &metrics, const QString &failure,
        QString *error = nullptr, double benchSeconds = -1);

    bool pin(const QString &kernel, const QString &reason = QString(), QString *error = nullptr);
    bool unpin(const QString &kernel, QString *error = nullptr);
    bool skip(const QString &kernel, const QString &reason = QString(), QString *error = nullptr);
    bool unskip(const QString &kernel, QString *error = nullptr);
    bool markDone(const QString &kernel, const QString &reason, QString *error = nullptr);
    // Makes an earlier kept, rejected or baseline experiment's kernel.py the head again, as a new
    // experiment (agent "user", status keep). Returns it (id 0 on error).
    Experiment revert(const QString &kernel, int experimentId, QString *error = nullptr);
    bool accept(int id, QString *error = nullptr);
    bool reject(int id, const QString &reason = QString(), QString *error = nullptr);
    bool setReviewMode(bool on, QString *error = nullptr);
    // Changes the move-on rules (run.json "move_on") for the loop's next experiment boundary. Values
    // are checked like MoveOnRules::fromJson (the error names the field). The log line {"type":"run",
    // "action":"move_on"} is the commit point; run.json (rewritten from the file on disk: key order
    // kept, secrets dropped) and the best commit follow. Rules equal to run.json's change nothing.
    // `by` names who asked (empty: this process, see author()).
    bool setMoveOnRules(const MoveOnRules &rules, QString *error = nullptr, const QString &by = QString());
    // run.json's "worker" section (launcher, remote python), so that a resume starts its workers the
    // same way; committed, not logged (a setting of how to run, like a hand edit, not run history).
    // `slurm`: salloc's arguments when the workers run in a Slurm allocation (then no launcher).
    bool setWorker(const QString &launcher, const QString &python, const QString &slurm = QString(),
        qint64 slurmJob = 0, QString *error = nullptr);
    // run.json's settings.allow_reduced_precision (other settings kept), committed like setWorker:
    // from now on the judge keeps, flagged, a kernel that takes a precision shortcut PyTorch does not.
    bool setAllowReducedPrecision(bool on, QString *error = nullptr);
    // Applies queued requests (RequestQueue::queue) in order; returns how many were applied. Problems with
    // a request are reported in `errors` and the request is dropped. Each one's outcome is recorded
    // for its requester (RequestQueue::outcome).
    int applyRequests(QStringList *errors = nullptr);
    // Carries out one steering request, as applyRequests() does for a queued one: move_on's fields
    // replace those of the current rules, review is logged even when the mode is already so.
    // `created`: the new experiment of a revert.
    bool apply(const SteerRequest &request, QString *error = nullptr, Experiment *created = nullptr);

    // Keeps what the agent answered for experiment `id` (secrets redacted, at most MaxReplyBytes:
    // the head and the tail of a longer one) as the blob refs/replies/<id>, beside the experiment
    // rather than in its tree, so diffs, heads and the best commit hold kernel.py alone. An empty
    // reply keeps nothing. `git cat-file -p refs/replies/17` shows it.
    bool attachReply(int id, const QString &reply, QString *error = nullptr);
    static constexpr int MaxReplyBytes = 256 * 1024;
    static QString replyRef(int id); // under GitRepo::BlobRefPrefix
    // The reply kept for experiment `id` in the run at `dir`; empty when there is none.
    static QByteArray readReply(const QString &dir, int id, QString *error = nullptr);

    // kernel.py at the kernel's head.
    QByteArray kernelSource(const QString &kernel, QString *error = nullptr) const;
    QString bestCommit() const;

    static QString kernelPath(const QString &kernel)
    {
        return QStringLiteral("kernels/") + kernel + QStringLiteral("/kernel.py");
    }
    static QString commitMessage(const Experiment &e);
    // "alice@gpu1 via autokernel-cli (pid 4242)": who this process is, for the log's "by".
    static QString author();

private:
    RunStore(const QString &dir, std::unique_ptr<GitRepo> repo, std::unique_ptr<RunLock> lock);
    // The writer of `dir` once its repository is open (create, open): takes the single-writer lock.
    static std::unique_ptr<RunStore> locked(
        const QString &dir, std::unique_ptr<GitRepo> repo, QString *error);

    bool load(QString *error);
    void removeStaleGitLocks();
    // Brings the run back in line with its log after an interrupted writer, step by step (the
    // steps in the order repair() runs them); each says what it did in m_repairNotes.
    void repair();
    void recoverUnloggedExperiments();
    void markInterruptedExperiments();
    void repairRunJson();
    void repairKernelHeads();
    void repairBest();
    void repairResultsTsv();
    bool appendLog(LogEntry &entry, QString *error);
    KernelRecord *findKernel(const QString &kernel, QString *error);
    bool kernelEvent(const QString &kernel, const QString &action, const QString &reason, QString *error);
    // Writes the final commit of an experiment (same tree and parent, outcome trailer) and points
    // refs/experiments/<id> at it; returns its id.
    QString finalCommit(const Experiment &e, QString *error);
    bool moveHead(const QString &kernel, const QString &commit, QString *error);
    bool updateBest(const QString &changedHead, const QString &why, QString *error);
    bool writeRunJsonSection(const QByteArray &before, const char *section, const nlohmann::json &value,
        const QString &why, QString *error);
    // profile.json, verification.json: written atomically, logged as a run action, committed on best.
    bool writeRootFile(const QString &name, const nlohmann::json &content, const QString &action,
        const QString &why, QString *error);
    void exportRow(const Experiment &before, const Experiment &after);
    bool rewriteResults(QString *error);
    QString path(const QString &name) const;

    QString m_dir;
    std::unique_ptr<GitRepo> m_repo;
    std::unique_ptr<RunLock> m_lock;
    RunSnapshot m_state;
    int m_nextId = 1;
    int m_lineCount = 0;
    QHash<QString, QString> m_headBlob; // kernel -> blob id of kernel.py at its head
    QMap<QString, QString> m_rootFiles; // run.json, profile.json, .gitignore -> blob id (best tree)
    QStringList m_repairNotes;
    QStringList m_strippedKeys;
};

} // namespace ak
