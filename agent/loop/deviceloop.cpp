#include "loop/deviceloop.h"

#include "agents/agent.h"
#include "atomicfile.h"
#include "cpudevice.h"
#include "devicedetector.h"
#include "loop/agentfactory.h"
#include "loop/harnessclient.h"
#include "loop/loopsession.h"
#include "looplogfile.h"
#include "roofmeter.h"
#include "runconfig.h"
#include "workerclient.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
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
    cfg.inModel.budgetPct = setup.inModelBudgetPct;
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

void DeviceLoop::measureRoofs(WorkerClient *worker, LoopSession *session, ExperimentLoopConfig *cfg)
{
    const QString runDir = session->runDir();
    RunConfig run; // the defaults when there is no run.json to read (no run folder)
    RunConfig::read(runDir, &run);
    RoofMeter::Request request;
    request.device = cfg->label.isEmpty() ? cfg->benchDevice : cfg->label;
    request.dtype = RoofMeter::dtypeFor(request.device, run.dtype);
    QString error, line;
    MeasuredRoofs roofs;
    if (RoofMeter::measure(worker, request, &roofs, &error)) {
        cfg->device.measured = roofs;
        line = QStringLiteral("[%1] measured roofs: %2").arg(cfg->label, roofs.summary());
    } else {
        line = QStringLiteral("[%1] %2: % of roof is against the spec sheet").arg(cfg->label, error);
    }
    if (!runDir.isEmpty()) {
        LoopLogFile::append(runDir, line);
        // One file for every device of the run: loops start together, so their writes take turns.
        static QMutex mutex;
        QMutexLocker lock(&mutex);
        const QString path = QDir(runDir).filePath(QStringLiteral("roofs.json"));
        nlohmann::json all = nlohmann::json::object();
        QFile old(path);
        if (old.open(QIODevice::ReadOnly))
            all = nlohmann::json::parse(old.readAll().toStdString(), nullptr, false);
        if (!all.is_object())
            all = nlohmann::json::object();
        all[cfg->label.toStdString()]
            = roofs.known() ? roofs.toJson() : nlohmann::json { { "error", error.toStdString() } };
        AtomicFile::write(path, QByteArray::fromStdString(all.dump(1) + "\n"));
    }
    if (session->onMessage)
        session->onMessage(line);
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
    ExperimentLoopConfig cfg = configFor(m_setup);
    measureRoofs(&worker, m_session, &cfg);
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
            // Checks run where the harness runs; a remote worker's side may not have the model's
            // file at the same path, so remote loops leave the model's verdict to `verify`.
            if (!cfg.remoteWorker)
                loop.setInModelRequest([&worker](const QString &op, const nlohmann::json &args, int ms) {
                    return worker.request(op, args, ms);
                });
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
