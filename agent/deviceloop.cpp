#include "deviceloop.h"

#include "agent.h"
#include "agentfactory.h"
#include "cpudevice.h"
#include "devicedetector.h"
#include "harnessclient.h"
#include "loopsession.h"
#include "workerclient.h"

#include <QMutexLocker>

#include <algorithm>

namespace ak {

namespace {

// "cuda:1" -> 1; "cuda" -> -1 (whatever the environment selects).
int cudaIndex(const QString &device)
{
    const int colon = int(device.indexOf(QLatin1Char(':')));
    bool ok = false;
    const int index = colon < 0 ? -1 : device.mid(colon + 1).toInt(&ok);
    return ok ? index : -1;
}

} // namespace

DeviceLoop::DeviceLoop(LoopSession *session, Setup setup)
    : m_session(session)
    , m_setup(std::move(setup))
{ }

ExperimentLoopConfig DeviceLoop::configFor(const Setup &setup)
{
    ExperimentLoopConfig cfg;
    cfg.label = setup.device;
    cfg.benchDevice
        = setup.device.startsWith(QLatin1String("cuda")) ? QStringLiteral("cuda") : QStringLiteral("cpu");
    cfg.maxKernels = setup.maxKernels;
    cfg.quickBench = setup.quickBench;
    cfg.benchTimeLimitSec = setup.benchTimeLimitSec;
    cfg.remoteWorker = !setup.launcher.isLocal();
    if (cfg.benchDevice == QLatin1String("cpu")) {
        cfg.device = cpuDevice();
    } else if (cfg.remoteWorker) {
        cfg.device = setup.runDevice; // this machine's GPU (if any) is not the one benchmarked
    } else {
        cfg.device = DeviceDetector::detect(std::max(0, cudaIndex(setup.device)));
        if (!cfg.device.available)
            cfg.device = setup.runDevice; // no vendor library here: trust what profiling found
    }
    return cfg;
}

QProcessEnvironment DeviceLoop::environmentFor(const QString &device)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const int index = cudaIndex(device);
    if (index >= 0)
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QString::number(index));
    return env;
}

ExperimentLoop::Step DeviceLoop::run()
{
    WorkerClient worker;
    worker.setPython(m_setup.python);
    worker.setLauncher(m_setup.launcher);
    if (cudaIndex(m_setup.device) >= 0 && !m_setup.launcher.isSrun())
        worker.setEnvironment(environmentFor(m_setup.device));
    const ExperimentLoopConfig cfg = configFor(m_setup);
    HarnessClient harness(&worker);
    AgentConfig config = m_setup.agent;
    AgentInputs inputs = m_setup.inputs;
    ExperimentLoop::Step last = ExperimentLoop::Step::Stopped;
    // A configuration that makes no agent: paused until a person resumes; false on a stop.
    auto pauseUntilFixed = [this](const QString &error) {
        m_session->pauseFor(QStringLiteral("agent configuration: %1 — fix it and Resume").arg(error), -1);
        return m_session->waitWhilePaused();
    };
    for (bool first = true;; first = false) {
        QString error;
        std::unique_ptr<Agent> agent = createAgent(config, inputs, &error);
        if (!agent && first) {
            m_session->requestStop(QStringLiteral("agent: ") + error, true);
            break;
        }
        if (agent) {
            {
                QMutexLocker lock(&m_mutex);
                m_agent = agent.get();
                m_worker = &worker;
            }
            if (m_session->stopRequested()) // a stop() that came before the pointers were set
                agent->requestStop();
            ExperimentLoop loop(
                m_session, agent.get(), [&harness](const BenchRequest &r) { return harness.bench(r); }, cfg);
            last = loop.run();
            QMutexLocker lock(&m_mutex);
            m_agent = nullptr;
            if (last != ExperimentLoop::Step::Reconfigure)
                break;
        }
        // Resumed with a configuration that still makes no agent: paused again, with why.
        bool resumed = agent ? m_session->waitWhilePaused() : pauseUntilFixed(error);
        while (resumed && m_setup.currentAgent && !m_setup.currentAgent(&config, &inputs, &error))
            resumed = pauseUntilFixed(error);
        if (!resumed) {
            last = ExperimentLoop::Step::Stopped;
            break;
        }
    }
    {
        QMutexLocker lock(&m_mutex);
        m_agent = nullptr;
        m_worker = nullptr;
    }
    worker.stop();
    return last;
}

void DeviceLoop::stop()
{
    QMutexLocker lock(&m_mutex);
    if (m_agent)
        m_agent->requestStop();
    if (m_worker)
        m_worker->cancel();
}

} // namespace ak
