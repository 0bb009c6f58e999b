#include "loop/localloop.h"

#include "loop/deviceloop.h"
#include "loop/experimentloop.h"
#include "loop/loopsession.h"
#include "loop/recordedrun.h"
#include "pythonlocator.h"
#include "runconfig.h"
#include "runloader.h"
#include "runsteering.h"
#include "runstore.h"
#include "workerlauncher.h"

#include <QCoreApplication>
#include <QMutex>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <vector>

namespace ak {

struct LocalLoop::Private
{
    std::unique_ptr<LoopSession> session;
    std::vector<std::unique_ptr<DeviceLoop>> devices; // one per thread, alive until the last ends
    QVector<QThread *> threads;
    int running = 0;
    QString endReason;
    bool failed = false;
    std::atomic<bool> nothingLeft { false }; // a loop ended because it found no kernel to work on
    LoopStats lastStats; // totals of the last invocation, kept after it ends
    AgentConfig agent;
    QString python;
    // The agent a device loop builds after a configuration pause (DeviceLoop::Setup::currentAgent):
    // read from the loop threads, changed by setAgent and by an edit of run.json's "agent".
    QMutex agentMutex;
    bool overrideAgent = false;
    AgentConfig agentOverride;
    AgentInputs agentInputs;
    // While paused by a configuration error: run.json's "agent" as it was, checked every second.
    QTimer *runJsonWatch = nullptr;
    QByteArray agentJsonAtPause;
};

namespace {

// run.json's "agent" section as text, to notice an edit; empty when absent or unreadable.
QByteArray runAgentJson(const QString &runDir)
{
    RunConfig config;
    return RunConfig::read(runDir, &config) ? config.agentJson : QByteArray();
}

// The agent a loop uses: `options`' own when it overrides run.json, else the run's own (`run`'s
// "agent") over it. The one rule for start() and for a rebuild after a pause.
bool resolveAgent(
    const AgentConfig &options, bool overrideRunJson, const RunConfig &run, AgentConfig *out, QString *error)
{
    *out = options;
    if (overrideRunJson || AgentConfig::fromRun(run, out, error))
        return true;
    *error = QStringLiteral("run.json: ") + *error;
    return false;
}

// A --slurm run's workers are steps of an allocation that only `autokernel-cli run` takes (and
// ends); started here without a launcher, they would silently run on this machine instead.
bool startableHere(const LoopOptions &options, const RunConfig &run, QString *error)
{
    if (options.setLauncher || run.workerSlurm.isEmpty())
        return true;
    *error = QStringLiteral("this run was started with `autokernel-cli run --slurm '%1'`; start it the same "
                            "way (or choose the launcher `local` to run its workers on this machine)")
                 .arg(run.workerSlurm);
    return false;
}

// Start with nothing to work on said so (#41): the loop would have ended at once, silently. Only
// waiting and active kernels are ever chosen (Orchestrator::next).
bool somethingLeft(const RunSnapshot &run, QString *error)
{
    for (const KernelRecord &k : run.kernels)
        if (k.state == KernelState::Waiting || k.state == KernelState::Active)
            return true;
    *error = QStringLiteral("nothing left to do: every kernel is done, pinned, skipped or not pluggable. "
                            "Unpin or un-skip one (Loop menu), or profile the model again for new kernels");
    return false;
}

// The devices to loop on: those chosen, else one, the GPU if the run was profiled on one.
QStringList devicesFor(const QStringList &chosen, const DeviceInfo &runDevice)
{
    if (!chosen.isEmpty())
        return chosen;
    return { runDevice.available && runDevice.vendor != QLatin1String("cpu") ? QStringLiteral("cuda")
                                                                             : QStringLiteral("cpu") };
}

} // namespace

LocalLoop::LocalLoop(const LoopOptions &options, QObject *parent)
    : LoopControl(parent)
    , m_options(options)
    , d(std::make_unique<Private>())
{ }

LocalLoop::~LocalLoop()
{
    stop();
    wait();
}

LoopControl::Capabilities LocalLoop::capabilities() const
{
    return CanStartStop | CanPause | CanSteerKernels | CanRevert | CanReview | CanEditRules
        | CanSetReviewMode;
}

QString LocalLoop::description() const
{
    const QStringList devices
        = m_options.devices.isEmpty() ? QStringList { QStringLiteral("default device") } : m_options.devices;
    return QStringLiteral("local loop (%1 agent) on %2")
        .arg(AgentConfig::kindName(d->agent.kind), devices.join(QStringLiteral(", ")));
}

void LocalLoop::setState(State s)
{
    if (m_state == s)
        return;
    m_state = s;
    Q_EMIT stateChanged(s);
}

void LocalLoop::start()
{
    if (m_state != State::Stopped)
        return Q_EMIT actionFailed(QStringLiteral("start"), QStringLiteral("the loop is already running"));
    // One error text through every step, as when start() was one function. The store (and with it
    // the run's lock) stays open until a failure has been reported.
    QString error;
    std::unique_ptr<RunStore> store = openRun(&error);
    if (!store)
        return Q_EMIT actionFailed(QStringLiteral("start"), error);
    const RunSnapshot &run = store->state();
    AgentConfig config;
    AgentInputs inputs;
    WorkerLauncher launcher;
    if (!somethingLeft(run, &error) || !startableHere(m_options, run.config, &error)
        || !prepareAgent(run.config, &config, &inputs, &error)
        || !chooseWorker(run.config, &launcher, &error))
        return Q_EMIT actionFailed(QStringLiteral("start"), error);
    recordWorker(store.get(), launcher, &error);
    if (m_options.allowReducedPrecision && !store->setAllowReducedPrecision(true, &error))
        Q_EMIT message(QStringLiteral("run.json's settings not updated: ") + error);
    const QStringList devices = devicesFor(m_options.devices, run.config.device);
    const DeviceInfo runDevice = run.config.device; // `run` is the store's, which the session takes
    openSession(std::move(store));
    startLoops(devices, launcher, config, inputs, runDevice);
}

std::unique_ptr<RunStore> LocalLoop::openRun(QString *error)
{
    std::unique_ptr<RunStore> store = RunStore::open(m_options.runDir, error);
    if (store) {
        for (const QString &note : store->repairNotes())
            Q_EMIT message(QStringLiteral("repair: ") + note);
    }
    return store;
}

bool LocalLoop::prepareAgent(const RunConfig &run, AgentConfig *config, AgentInputs *inputs, QString *error)
{
    // The agent: the run's configuration unless this invocation overrides it.
    if (!resolveAgent(m_options.agent, m_options.overrideAgent, run, config, error))
        return false;
    *inputs = m_options.agentInputs;
    if (config->kind == AgentConfig::Kind::Replay && inputs->recorded.isEmpty()
        && !config->replayRun.isEmpty())
        inputs->recorded = readRecordedProposals(config->replayRun, error);
    if (!createAgent(*config, *inputs, error)) // fail before any thread starts, with the reason
        return false;
    d->agent = *config;
    QMutexLocker lock(&d->agentMutex);
    d->overrideAgent = m_options.overrideAgent;
    d->agentOverride = m_options.agent;
    d->agentInputs = *inputs;
    return true;
}

bool LocalLoop::chooseWorker(const RunConfig &run, WorkerLauncher *launcher, QString *error)
{
    // Where the workers start: this invocation's launcher (kept in run.json for a resume), else
    // run.json's.
    const QString launcherText = m_options.setLauncher ? m_options.launcher : run.workerLauncher;
    QString launcherError;
    *launcher = WorkerLauncher::parse(launcherText, &launcherError);
    if (!launcherError.isEmpty()) {
        *error = launcherError;
        return false;
    }
    if (!launcher->isLocal()) {
        // The interpreter is a name on the far side: nothing here can check it; the worker's first
        // start does (and a missing torch there pauses the loop, docs/remote.md).
        d->python = !m_options.python.isEmpty() ? m_options.python
            : !run.workerPython.isEmpty()       ? run.workerPython
                                                : QStringLiteral("python3");
        return true;
    }
    // An explicit choice wins, then $AUTOKERNEL_PYTHON (the locator reads it), then the
    // interpreter the run was profiled with if it exists on this machine, then auto-detection.
    const PythonLocator::Choice choice = PythonLocator::forRun(run.python, m_options.python);
    if (!choice.ok()) {
        *error = QStringLiteral("no usable Python: ") + choice.error;
        return false;
    }
    d->python = choice.python;
    return true;
}

void LocalLoop::recordWorker(RunStore *store, const WorkerLauncher &launcher, QString *error)
{
    // Only a launcher chosen by this invocation is written, so that a resume starts workers the same way.
    if (m_options.setLauncher
        && !store->setWorker(m_options.slurm.isEmpty() ? launcher.text() : QString(),
            launcher.isLocal() ? QString() : d->python, m_options.slurm, m_options.slurmJob, error))
        Q_EMIT message(QStringLiteral("run.json's worker section not updated: ") + *error);
}

void LocalLoop::openSession(std::unique_ptr<RunStore> store)
{
    d->session = std::make_unique<LoopSession>(std::move(store));
    d->session->setBudget(m_options.budgetSeconds, m_options.maxExperiments);
    d->session->onMessage = [this](const QString &line) { Q_EMIT message(line); };
    d->session->onSelfPause = [this](const QString &reason) {
        const bool untilResumed = !reason.isEmpty() && d->session->pausedUntilResumed();
        // From a loop thread: the state belongs to this object's thread.
        QMetaObject::invokeMethod(
            this, [this, reason, untilResumed] { selfPaused(reason, untilResumed); }, Qt::QueuedConnection);
    };
}

void LocalLoop::selfPaused(const QString &reason, bool untilResumed)
{
    if (!reason.isEmpty()) {
        if (m_state == State::Running)
            setState(State::Paused);
        Q_EMIT message(QStringLiteral("paused: ") + reason);
        if (untilResumed)
            watchRunJson();
    } else if (m_state == State::Paused) {
        setState(State::Running);
        Q_EMIT message(QStringLiteral("the pause is over: asking the agent again"));
    }
}

void LocalLoop::startLoops(const QStringList &devices, const WorkerLauncher &launcher,
    const AgentConfig &config, const AgentInputs &inputs, const DeviceInfo &runDevice)
{
    d->endReason.clear();
    d->failed = false;
    d->nothingLeft = false;
    d->running = int(devices.size());
    setState(State::Running);
    for (const QString &device : devices) {
        DeviceLoop::Setup setup;
        setup.device = device;
        setup.python = d->python;
        setup.launcher = launcher;
        setup.agent = config;
        setup.inputs = inputs;
        setup.runDevice = runDevice;
        setup.maxKernels = m_options.maxKernels;
        setup.quickBench = m_options.quickBench;
        setup.benchTimeLimitSec = m_options.benchTimeLimitSec;
        setup.inModelBudgetPct = m_options.inModelBudgetPct;
        setup.currentAgent = [this](AgentConfig *config, AgentInputs *inputs, QString *error) {
            return currentAgent(config, inputs, error);
        };
        d->devices.push_back(std::make_unique<DeviceLoop>(d->session.get(), setup));
        startThread(d->devices.back().get());
    }
}

void LocalLoop::startThread(DeviceLoop *loop)
{
    QThread *thread = QThread::create([this, loop] {
        // Not the end reason yet: with several devices, the other loops may still be working on
        // the kernels they hold (and then end on the budget or a stop instead).
        if (loop->run() == ExperimentLoop::Step::NothingLeft)
            d->nothingLeft = true;
    });
    connect(thread, &QThread::finished, this, [this, thread] { loopThreadFinished(thread); });
    d->threads << thread;
    thread->start();
}

void LocalLoop::loopThreadFinished(QThread *thread)
{
    thread->deleteLater();
    d->threads.removeAll(thread);
    if (--d->running > 0)
        return;
    if (d->nothingLeft)
        d->session->setEndReason(QStringLiteral("every kernel is done, pinned or skipped"));
    d->endReason = d->session->endReason();
    d->failed = d->session->failed();
    d->lastStats = d->session->stats();
    if (d->endReason.isEmpty())
        d->endReason = QStringLiteral("stopped");
    d->devices.clear();
    d->session.reset(); // closes the store: the run's lock is released
    setState(State::Stopped);
    Q_EMIT finished(d->endReason);
}

bool LocalLoop::currentAgent(AgentConfig *config, AgentInputs *inputs, QString *error) const
{
    QMutexLocker lock(&d->agentMutex);
    *inputs = d->agentInputs;
    RunConfig run; // the defaults (no agent section) when overriding or unreadable
    if (!d->overrideAgent)
        RunConfig::read(m_options.runDir, &run);
    return resolveAgent(d->agentOverride, d->overrideAgent, run, config, error);
}

void LocalLoop::setAgent(const AgentConfig &config, const AgentInputs &inputs, bool overrideRunJson)
{
    QMutexLocker lock(&d->agentMutex);
    d->agentOverride = config;
    d->agentInputs = inputs;
    d->overrideAgent = overrideRunJson;
}

void LocalLoop::watchRunJson()
{
    // A CLI run has nobody to press Resume: an edit of run.json's "agent" resumes it with the edit.
    d->agentJsonAtPause = runAgentJson(m_options.runDir);
    if (!d->runJsonWatch) {
        d->runJsonWatch = new QTimer(this);
        d->runJsonWatch->setInterval(1000);
        connect(d->runJsonWatch, &QTimer::timeout, this, [this] {
            if (m_state != State::Paused || !d->session || !d->session->pausedUntilResumed()) {
                d->runJsonWatch->stop();
                return;
            }
            if (runAgentJson(m_options.runDir) == d->agentJsonAtPause)
                return;
            d->runJsonWatch->stop();
            {
                QMutexLocker lock(&d->agentMutex);
                d->overrideAgent = false; // the edit is the newer word than this invocation's flags
            }
            Q_EMIT message(QStringLiteral("run.json's agent changed: resuming with it"));
            resume();
        });
    }
    d->runJsonWatch->start();
}

void LocalLoop::pause()
{
    if (m_state != State::Running || !d->session)
        return;
    d->session->setPaused(true);
    setState(State::Paused);
}

void LocalLoop::resume()
{
    if (m_state != State::Paused || !d->session)
        return;
    d->session->setPaused(false);
    setState(State::Running);
}

void LocalLoop::stop()
{
    if (!d->session || m_state == State::Stopped)
        return;
    d->session->requestStop(QStringLiteral("stopped by the user"));
    for (const auto &loop : d->devices)
        loop->stop();
    setState(State::Stopping);
}

void LocalLoop::wait()
{
    for (QThread *t : d->threads)
        t->wait();
    // Deliver the threads' queued finished() so the state and the lock are released now.
    QCoreApplication::sendPostedEvents(this);
}

LoopStats LocalLoop::stats() const
{
    return d->session ? d->session->stats() : d->lastStats;
}

QString LocalLoop::endReason() const
{
    return d->endReason;
}

bool LocalLoop::endedWithFailure() const
{
    return d->failed;
}

void LocalLoop::send(const QString &name, const SteerRequest &request)
{
    // While our loop runs this process is the run's writer: the request waits for its next
    // experiment boundary. Stopped, the request is applied at once (or queued for another writer).
    const RunSteering::Outcome o = RunSteering::steer(m_options.runDir, request,
        d->session ? RunSteering::Writer::ThisProcess : RunSteering::Writer::Unknown);
    switch (o.kind) {
    case RunSteering::Outcome::Kind::Applied:
        return Q_EMIT actionFinished(name, QStringLiteral("applied"));
    case RunSteering::Outcome::Kind::Queued:
        return Q_EMIT actionFinished(name, QStringLiteral("queued; applied at the next experiment boundary"));
    case RunSteering::Outcome::Kind::Refused:
    case RunSteering::Outcome::Kind::Failed:
        return Q_EMIT actionFailed(name, o.message);
    }
}

void LocalLoop::setMoveOnRules(const MoveOnRules &rules)
{
    send(QStringLiteral("setMoveOnRules"), SteerRequest::moveOn(rules, RunStore::author()));
}

void LocalLoop::setReviewMode(bool on)
{
    send(QStringLiteral("setReviewMode"), SteerRequest::review(on));
}

void LocalLoop::pin(const QString &kernel)
{
    send(QStringLiteral("pin"), SteerRequest::kernelAction(SteerRequest::Action::Pin, kernel));
}
void LocalLoop::unpin(const QString &kernel)
{
    send(QStringLiteral("unpin"), SteerRequest::kernelAction(SteerRequest::Action::Unpin, kernel));
}
void LocalLoop::skip(const QString &kernel)
{
    send(QStringLiteral("skip"), SteerRequest::kernelAction(SteerRequest::Action::Skip, kernel));
}
void LocalLoop::revert(const QString &kernel, int experimentId)
{
    send(QStringLiteral("revert"),
        SteerRequest::kernelAction(SteerRequest::Action::Revert, kernel, experimentId));
}
void LocalLoop::accept(int experimentId)
{
    send(QStringLiteral("accept"),
        SteerRequest::kernelAction(SteerRequest::Action::Accept, QString(), experimentId));
}
void LocalLoop::reject(int experimentId)
{
    send(QStringLiteral("reject"),
        SteerRequest::kernelAction(SteerRequest::Action::Reject, QString(), experimentId));
}

} // namespace ak
