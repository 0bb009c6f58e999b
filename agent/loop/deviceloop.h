#pragma once

#include "agents/agentconfig.h"
#include "deviceinfo.h"
#include "loop/agentfactory.h"
#include "loop/experimentloop.h"
#include "workerlauncher.h"

#include <QMutex>
#include <QProcessEnvironment>
#include <QString>
#include <functional>

namespace ak {

class Agent;
class LoopSession;
class WorkerClient;

// One device's part of a local loop, run on a thread of its own: a worker process pinned to the
// device (CUDA_VISIBLE_DEVICES), the device's facts for % of roof and the prompt, an agent of its
// own, and an ExperimentLoop until it ends. stop() may be called from any thread: it cancels the
// agent's request and the worker's bench in flight, so the loop reaches its boundary at once.
class DeviceLoop
{
public:
    struct Setup
    {
        QString device; // "cpu", "cuda", "cuda:1"
        QString python; // with a launcher: the interpreter's name on the far side
        WorkerLauncher launcher; // local unless set: ssh, srun (docs/remote.md)
        AgentConfig agent;
        AgentInputs inputs;
        DeviceInfo runDevice; // what profiling found: used when no vendor library answers here
        int maxKernels = 0;
        bool quickBench = false;
        int benchTimeLimitSec = 0;
        double inModelBudgetPct = 10.0; // % of the loop's time the in-model checks of keeps may take; 0: off
        // The agent as configured now (LocalLoop: its options, or run.json's "agent"), asked after
        // a configuration error paused the loop and a person resumed it; none: `agent` again.
        std::function<bool(AgentConfig *config, AgentInputs *inputs, QString *error)> currentAgent;
    };

    DeviceLoop(LoopSession *session, Setup setup);

    // The loop's configuration for a device name ("cuda:1" -> the harness's "cuda", label "cuda:1");
    // device facts are detected here (NVML and the rest are loaded at run time).
    static ExperimentLoopConfig configFor(const Setup &setup);
    // The worker's environment for a device name: "cuda:N" pins the worker to GPU N.
    static QProcessEnvironment environmentFor(const QString &device);

    // Runs on the calling thread until the loop ends; returns its last step. An agent that cannot be
    // made stops the whole session (a failure), since every device would fail the same way. After a
    // configuration error (ExperimentLoop::Step::Reconfigure) it waits for the pause to end and
    // builds the agent again from Setup::currentAgent; one that still cannot be made pauses again.
    ExperimentLoop::Step run();
    void stop();

    // The device's measured roofs into cfg->device (the worker's cache, or a measurement on first use
    // of the device), copied into the run's roofs.json under cfg->label so the run keeps what its % of
    // roof was taken against. Failing leaves the spec roofs and says why; never stops the loop.
    static void measureRoofs(WorkerClient *worker, LoopSession *session, ExperimentLoopConfig *cfg);

private:
    LoopSession *m_session;
    Setup m_setup;
    QMutex m_mutex; // guards the two pointers below, alive only while run() is in its loop
    Agent *m_agent = nullptr;
    WorkerClient *m_worker = nullptr;
};

} // namespace ak
