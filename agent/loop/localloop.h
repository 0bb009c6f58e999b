#pragma once

#include "agents/agentconfig.h"
#include "loop/agentfactory.h"
#include "loopcontrol.h"

#include <QStringList>

#include <nlohmann/json_fwd.hpp>

#include <memory>

class QThread;

namespace ak {

class DeviceLoop;
struct DeviceInfo;
struct LoopStats;
struct RunConfig;
class RunStore;
class SteerRequest;
class WorkerLauncher;

// How a LocalLoop runs. Everything here is a per-invocation choice; the run's own settings (move-on
// rules, review mode, the agent configuration) live in run.json and are read by the loop.
struct LoopOptions
{
    QString runDir;
    // One loop (and one Python worker) per entry: "cpu", "cuda", "cuda:0", "cuda:1", ... Each loop owns
    // its device and works on a different kernel. Empty: {"cuda"} if the run was profiled on a GPU,
    // else {"cpu"}.
    QStringList devices;
    QString python; // interpreter with torch; empty: the run's, else auto-detect
    // Workers through a launcher ("ssh gpu1", "srun ..."; docs/remote.md). Unset: run.json's
    // "worker" section; set (even to empty = local): this, written to run.json for the next resume.
    bool setLauncher = false;
    QString launcher;
    // With setLauncher: the workers are steps of a Slurm allocation taken with these salloc
    // arguments (autokernel-cli run --slurm); run.json keeps them instead of the job's launcher.
    QString slurm;
    qint64 slurmJob = 0; // its job id, shown in the run's summary (run.json worker.slurm_job)
    bool overrideAgent = false; // use `agent` below instead of run.json's "agent" section
    AgentConfig agent;
    AgentInputs agentInputs; // API key, prices, recorded proposals (never written to the run)
    int maxKernels = 0; // only the first N kernels in Amdahl order; 0 = all
    double budgetSeconds = 0; // stop (at an experiment boundary) after this long; 0 = no limit
    int maxExperiments = 0; // stop after this many experiments in this invocation; 0 = no limit
    bool quickBench = false; // the harness's quick mode (fewer sizes / repetitions)
    // --allow-reduced-precision: written to run.json (settings.allow_reduced_precision) for this and
    // every later resume; false leaves run.json's setting as it is.
    bool allowReducedPrecision = false;
    int benchTimeLimitSec = 0; // per experiment; 0: HarnessClient's default
    double inModelBudgetPct = 10.0; // in-model checks of keeps (#38 item 5): % of loop time; 0: off
};

// The in-process loop behind LoopControl: one QThread per device, each running an ExperimentLoop over
// the shared RunStore (this process becomes the run's single writer while it runs). Steering calls
// (pin, skip, revert, accept, reject, move-on rules, review mode) go through RunSteering::steer like
// the CLI's: queued as run-directory requests while the loop runs and applied at its next experiment
// boundary, applied at once while it is stopped; the GUI sees their effect by re-reading the run.
class LocalLoop : public LoopControl
{
    Q_OBJECT
public:
    explicit LocalLoop(const LoopOptions &options, QObject *parent = nullptr);
    ~LocalLoop() override; // stops and joins the threads

    Capabilities capabilities() const override;
    State state() const override { return m_state; }
    QString description() const override;

    void start() override;
    void pause() override;
    void resume() override;
    void stop() override;
    void pin(const QString &kernel) override;
    void unpin(const QString &kernel) override;
    void skip(const QString &kernel) override;
    void revert(const QString &kernel, int experimentId) override;
    void accept(int experimentId) override;
    void reject(int experimentId) override;
    void setMoveOnRules(const ak::MoveOnRules &rules) override;
    // The request {"action":"review","value":on}: applied at once when stopped, else at the next
    // experiment boundary (an experiment already running finishes under the old mode).
    void setReviewMode(bool on) override;

    // The agent a loop paused by a configuration error builds on Resume (Loop ▸ Agent… while it
    // runs): `config` as it is, or under run.json's "agent" when !overrideRunJson. The running agent
    // is not replaced. While such a pause lasts, an edit of run.json's "agent" resumes the loop with it.
    void setAgent(const AgentConfig &config, const AgentInputs &inputs, bool overrideRunJson);

    // Blocks the calling thread until every loop thread has ended (the CLI; tests).
    void wait();
    // Totals since start() (thread-safe).
    LoopStats stats() const;
    // Why the loop ended when it ended on its own (all kernels done, budget, error); empty otherwise.
    QString endReason() const;
    // The loop ended because it could not go on (harness unusable, kernel.py unreadable, agent unusable).
    bool endedWithFailure() const;

Q_SIGNALS:
    void finished(const QString &reason);

private:
    struct Private;
    void setState(State s);
    // start()'s steps, in its order. Those that can fail leave the reason start() reports in `error`.
    std::unique_ptr<RunStore> openRun(QString *error);
    bool prepareAgent(const RunConfig &run, AgentConfig *config, AgentInputs *inputs, QString *error);
    bool chooseWorker(const RunConfig &run, WorkerLauncher *launcher, QString *error);
    void recordWorker(RunStore *store, const WorkerLauncher &launcher, QString *error);
    void openSession(std::unique_ptr<RunStore> store);
    void startLoops(const QStringList &devices, const WorkerLauncher &launcher, const AgentConfig &config,
        const AgentInputs &inputs, const DeviceInfo &runDevice);
    void startThread(DeviceLoop *loop);
    // On this object's thread: a loop thread ended; the last one ends the invocation.
    void loopThreadFinished(QThread *thread);
    // On this object's thread: the session paused itself (`reason`) or its pause is over (empty).
    void selfPaused(const QString &reason, bool untilResumed);
    // DeviceLoop::Setup::currentAgent (from the loop threads).
    bool currentAgent(AgentConfig *config, AgentInputs *inputs, QString *error) const;
    void watchRunJson();
    // RunSteering::steer; `name` is the LoopControl call for actionFinished / actionFailed.
    void send(const QString &name, const SteerRequest &request);

    LoopOptions m_options;
    State m_state = State::Stopped;
    std::unique_ptr<Private> d;
};

} // namespace ak
