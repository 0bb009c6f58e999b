#pragma once

#include "agents/agent.h"
#include "agents/promptbuilder.h"
#include "agents/tunememory.h"
#include "backoff.h"
#include "loop/benchverdict.h"
#include "loop/harnessclient.h"
#include "loop/inmodelchecker.h"
#include "loop/loopsession.h"
#include "moveonrules.h"
#include "runsnapshot.h"

#include <QHash>
#include <QTemporaryDir>

#include <functional>
#include <optional>

namespace ak {

struct ExperimentLoopConfig
{
    QString label = QStringLiteral("cpu"); // shown in messages: "cpu", "cuda:1"
    QString benchDevice = QStringLiteral("cpu"); // the harness's device: "cpu" | "cuda"
    DeviceInfo device; // peaks for % of roof, the prompt's device facts
    int maxKernels = 0; // only the first N kernels in Amdahl order; 0 = all
    bool quickBench = false;
    int benchTimeLimitSec = 0; // 0: HarnessClient's default
    int writeRetryMs = 5000; // first wait after a refused run-store write (doubles, max 5 min)
    // The agent's breaker: this many outages in a row (network, timeout, HTTP errors the client
    // gave up retrying) pause the loop for breakerPauseSec (doubling per trip, at most 15 min); the
    // next proposal after it is the probe, and one more outage trips it again.
    int breakerOutages = 3;
    int breakerPauseSec = 60;
    // The worker runs through a launcher (ssh, srun): a harness that cannot run there (host down, no
    // torch on that side) pauses the loop for workerRetrySec, doubling per failure up to 15 min, and
    // then starts the worker again, instead of stopping the run (a local harness failure stops it).
    bool remoteWorker = false;
    int workerRetrySec = 30;
    // The in-model check of keeps (#38 item 5); runs only once setInModelRequest gave the loop a worker.
    InModelCheckConfig inModel;
};

// One device's loop: propose -> static check -> commit -> harness -> keep or revert -> log, kernel
// after kernel in the orchestrator's order. Runs on one thread (the one that calls step()/run());
// the agent and the harness run without the session lock, so several loops (one per GPU) share a run.
class ExperimentLoop
{
public:
    using BenchFn = std::function<BenchResult(const BenchRequest &request)>;

    ExperimentLoop(LoopSession *session, Agent *agent, BenchFn bench, ExperimentLoopConfig config);

    // Reconfigure: the agent reported a configuration error (a refused key, a wrong model, an
    // unreachable server): the session is paused until a person resumes it, nothing was recorded
    // against the kernel, and the caller builds the agent again from the configuration then current.
    enum class Step { Worked, NothingLeft, Stopped, Reconfigure };
    // One experiment (or one baseline measurement, or one retirement of kernels). Requests queued in
    // the run directory (pin, skip, revert, accept, reject) are applied first: the experiment boundary.
    Step step();
    // Steps until nothing is left, a stop, a configuration error, or the session's budget is spent.
    // Returns the last step.
    Step run();

    // Turns on the in-model check of keeps: `request` reaches the loop's worker (DeviceLoop's).
    void setInModelRequest(InModelChecker::RequestFn request);

    // Loop time of the last experiment outside the agent and the harness, in ms.
    double lastOverheadMs() const { return m_lastOverheadMs; }

private:
    class OverheadClock;
    // What a step works on: the kernel this loop claimed and the run as it was when claimed.
    struct Claim
    {
        QString kernel;
        RunSnapshot run;
        MoveOnRules rules;
    };

    // The named steps of step(), in order. Each returns what the step it ends should return, or
    // nothing to go on.
    // Applies queued requests, retires kernels the rules let go, claims the next kernel.
    bool claim(Claim *out);
    Step measureBaseline(const QString &kernel, const RunSnapshot &run);
    AgentContext context(const QString &kernel, const RunSnapshot &run, const MoveOnRules &rules);
    // An agent that produced nothing: stop, retire the kernel, or record a failed experiment.
    Step agentFailed(const QString &kernel, const AgentError &error, const QByteArray &current,
        Experiment draft, OverheadClock &clock);
    // The static check of a proposal: empty, or why it never reaches the harness.
    // `info` receives the proposal's static check (kept for TuneMemory when the proposal is kept).
    static QString checkProposal(const AgentContext &ctx, const QByteArray &proposed, KernelStaticInfo *info);
    // Commits the proposal as a running experiment; false (after waiting, if asked) when refused.
    bool begin(const QString &kernel, const QByteArray &proposed, const Experiment &draft, Experiment *out,
        Step *ended);
    BenchResult benchCandidate(const QString &kernel, const QByteArray &proposed);
    // Writes the verdict into the experiment, waiting while the store refuses: the result is measured.
    // `recorded` receives the experiment as the store finished it (review mode makes a keep pending).
    Step record(Experiment e, const BenchVerdict &verdict, const BenchResult &bench, OverheadClock &clock,
        Experiment *recorded);

    // Records a proposal that never reaches the harness (agent error, static check) as failed.
    // `reply`: the agent's raw answer, kept beside the experiment (RunStore::attachReply).
    Experiment recordFailure(const QString &kernel, const QByteArray &kernelPy, const Experiment &draft,
        const QString &reason, ExperimentStatus status, const QString &reply = QString());
    // Keeps the agent's raw reply beside experiment `e` (RunStore::attachReply); `store` is the
    // session's, held by the caller.
    void keepReply(RunStore &store, const Experiment &e, const QString &reply);
    // The agent's breaker: counts outages in a row and pauses the session when they reach the limit.
    // Pauses with back-off after a remote worker's environment error, or stops the loop when srun
    // says its Slurm allocation is over (true as well: handled); false where the caller stops.
    bool pauseForWorker(const QString &why);
    void countOutage(const AgentError &e);
    void finished(const Experiment &e, const QString &verdict);
    // After a refused run-store write: waits before the loop goes on (waitBeforeRetrying), unless the
    // kernel was pinned meanwhile, the one refusal that is not a problem. Returns whether a stop came.
    bool writeRefused(const QString &kernel, const QString &error);
    // Waits (backing off) after a refused write; false when a stop arrived meanwhile.
    bool waitBeforeRetrying(const QString &error);
    QString writeCandidate(const QString &kernel, const QByteArray &kernelPy, QString *error);
    BenchRequest request(const QString &kernel, const QString &path) const;
    void message(const QString &text) const;
    void noteSandbox(const BenchResult &bench);
    // After a keep: the kept kernel alone inside the model (InModelChecker), recorded in inmodel.json;
    // the move-on rule "max_in_model_misses" reads it at the next claim.
    void checkInModel(const Experiment &kept);

    LoopSession *m_session;
    Agent *m_agent;
    BenchFn m_bench;
    ExperimentLoopConfig m_config;
    PromptBuilder m_prompts;
    QTemporaryDir m_scratch;
    QHash<int, QString> m_proposedText; // experiment id -> kernel.py it proposed (read back once)
    // TuneMemory as this loop read it at its first experiment (one file read per loop, not per step).
    std::optional<QVector<TuneMemory::Entry>> m_memory;
    std::optional<InModelChecker> m_inModel;
    // A kept kernel.py's tunable constants go to TuneMemory for the next runs on this device.
    void rememberKeep(
        const Experiment &e, const KernelRecord &kernel, const KernelStaticInfo &info, const QString &runDir);
    // The kernel.py experiment `e` proposed, read from its commit once (m_proposedText); empty when
    // it has no commit or cannot be read.
    QString proposedText(RunStore &store, const Experiment &e);
    QString m_rulesWarning;
    QString m_sandbox; // the judge's isolation, as last reported
    int m_environmentErrors = 0;
    int m_outages = 0; // the agent's outages in a row (the breaker's count)
    // The three pauses, each doubling while its trouble lasts (15 min at most for the agent and the
    // worker, 5 min between write attempts); reset by a usable answer, a harness that ran, a write.
    Backoff m_breakerPause;
    Backoff m_workerPause;
    Backoff m_writeRetry;
    double m_lastOverheadMs = 0;
};

} // namespace ak
