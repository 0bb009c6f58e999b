#include "runcreator.h"

#include "contractshapes.h"
#include "modelprofiler.h"
#include "pythonlocator.h"
#include "runstore.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>

namespace ak {

RunCreator::RunCreator(const Options &options)
    : m_options(options)
{ }

RunCreator::~RunCreator() = default;

bool RunCreator::isTarget(const QString &opType)
{
    static const QStringList targets
        = { QStringLiteral("matmul"), QStringLiteral("flash_attention"), QStringLiteral("softmax"),
              QStringLiteral("layernorm"), QStringLiteral("rmsnorm"), QStringLiteral("fused_mlp"),
              QStringLiteral("cross_entropy"), QStringLiteral("rotary_embedding"), QStringLiteral("reduce") };
    return targets.contains(opType);
}

void RunCreator::cancel()
{
    m_cancelled = true;
    std::lock_guard<std::mutex> lock(m_workerMutex);
    if (m_worker)
        m_worker->cancel(); // documented thread-safe: kills the worker, the blocking request returns
}

void RunCreator::setWorker(WorkerClient *worker)
{
    std::lock_guard<std::mutex> lock(m_workerMutex);
    m_worker = worker;
    // A cancel() that came before the worker existed still has to reach it.
    if (worker && m_cancelled)
        worker->cancel();
}

RunCreator::Result RunCreator::create(const Callbacks &callbacks)
{
    Result r;
    auto cancelled = [&r] {
        r.failure = Failure::Cancelled;
        r.error = QStringLiteral("cancelled");
        return r;
    };
    const Options &o = m_options;
    // Refuse an existing run before the (long) profile, not after it.
    if (QFileInfo::exists(QDir(o.outDir).filePath(QStringLiteral("run.json")))) {
        r.failure = Failure::RunExists;
        r.error = QStringLiteral("%1 already holds a run (run.json exists)").arg(o.outDir);
        return r;
    }

    PythonLocator locator;
    locator.setExplicit(o.python);
    const PythonLocator::Choice choice = locator.locate();
    if (!choice.ok()) {
        r.failure = Failure::NoPython;
        r.error = choice.error;
        return r;
    }
    r.python = choice.python;
    if (m_cancelled)
        return cancelled();

    WorkerClient worker;
    worker.setPython(choice.python);
    setWorker(&worker);
    struct Detach
    {
        RunCreator *self;
        ~Detach() { self->setWorker(nullptr); }
    } detach { this };

    QStringList log;
    r.device = ModelProfiler::resolveDevice(worker, o.device, &log);
    if (m_cancelled)
        return cancelled();
    if (callbacks.deviceResolved)
        callbacks.deviceResolved(r.device);

    ModelProfiler::Options po;
    po.model = o.model;
    po.device = o.device;
    po.dtype = o.dtype;
    po.iterations = o.iterations;
    po.warmup = o.warmup;
    po.timeoutMs = o.timeoutMs;
    QString error, traceback;
    if (!ModelProfiler::profile(worker, po, r.device, &r.report, &error, &traceback, callbacks.progress)) {
        if (m_cancelled)
            return cancelled();
        r.failure = Failure::ProfileFailed;
        r.error = error;
        r.traceback = traceback;
        return r;
    }
    if (m_cancelled)
        return cancelled();

    // Only now, with a complete profile, does the run directory come into being.
    if (callbacks.step)
        callbacks.step(QStringLiteral("creating the run directory"));
    const ProfileReport &report = r.report;
    QString modelSha;
    QFile modelFile(report.modelPath);
    if (modelFile.open(QIODevice::ReadOnly)) // verify refuses a model file changed since
        modelSha = QString::fromLatin1(
            QCryptographicHash::hash(modelFile.readAll(), QCryptographicHash::Sha256).toHex());
    nlohmann::json config { { "model", o.model.toStdString() },
        { "model_path", report.modelPath.toStdString() }, { "model_sha256", modelSha.toStdString() },
        { "dtype", report.dtype.toStdString() }, { "activity", report.activity.toStdString() },
        { "python", choice.python.toStdString() }, { "device", report.device.toJson() } };
    std::unique_ptr<RunStore> store = RunStore::create(o.outDir, config, &error);
    if (!store) {
        r.failure = Failure::CannotCreateRun;
        r.error = error;
        return r;
    }
    extractKernels(worker, *store, r, callbacks);
    if (m_cancelled)
        return cancelled();
    if (!store->writeProfile(r.report.toJson(), &error)) {
        r.failure = Failure::CannotWriteProfile;
        r.error = error;
    }
    return r;
}

void RunCreator::extractKernels(WorkerClient &worker, RunStore &store, Result &r, const Callbacks &callbacks)
{
    ProfileReport &report = r.report;
    QString error;
    // One folder per (op type, contract shapes): repeated layers share a kernel. Every profile row a
    // folder covers names it in profile.json ("folder"), so verify finds all its call sites.
    QHash<QString, QString> folderOf;
    for (int index = 0; index < report.kernels.size(); ++index) {
        if (m_cancelled)
            return;
        KernelRecord &k = report.kernels[index];
        if (!isTarget(k.opType))
            continue;
        const std::vector<ContractShapes::Shape> shapes = ContractShapes::of(k.opType, report.calls[index]);
        if (shapes.empty())
            continue; // this kernel's op does not carry the operands (e.g. a copy inside addmm)
        nlohmann::json shapesJson = shapes;
        const QString key = k.opType + QString::fromStdString(shapesJson.dump());
        if (folderOf.contains(key)) {
            k.folder = folderOf.value(key);
            continue;
        }
        if (r.kernelFolders >= m_options.top)
            continue;
        if (callbacks.step)
            callbacks.step(QStringLiteral("kernel.py for rank %1 (%2)").arg(k.rank).arg(k.opType));
        nlohmann::json extractArgs { { "op_type", k.opType.toStdString() },
            { "device", report.activity.toStdString() }, { "dtype", k.dtype.toStdString() },
            { "shapes", shapesJson },
            { "name", QStringLiteral("%1 (%2, rank %3)").arg(k.name, k.atenOp).arg(k.rank).toStdString() } };
        const WorkerReply reply = worker.request(QStringLiteral("extract"), extractArgs, 120000);
        if (!reply.ok() && reply.error.contains(QLatin1String("is not available"))) {
            r.notes
                << QStringLiteral("no kernel folders: the worker has no extract op (%1)").arg(reply.error);
            break;
        }
        if (!reply.ok() || !reply.result.is_object() || !reply.result.contains("kernel_py")
            || !reply.result["kernel_py"].is_string()) {
            r.notes << QStringLiteral("rank %1 (%2): no kernel.py extracted: %3")
                           .arg(k.rank)
                           .arg(
                               k.opType, reply.ok() ? QStringLiteral("reply has no kernel_py") : reply.error);
            continue;
        }
        k.folder = QStringLiteral("kernels/%1-%2").arg(k.rank, 2, 10, QLatin1Char('0')).arg(k.opType);
        const QByteArray py = QByteArray::fromStdString(reply.result["kernel_py"].get<std::string>());
        const Experiment baseline = store.addKernel(k, py, &error);
        if (baseline.id == 0) {
            r.notes << QStringLiteral("rank %1: %2").arg(k.rank).arg(error);
            k.folder.clear();
            continue;
        }
        folderOf.insert(key, k.folder);
        ++r.kernelFolders;
    }
}

} // namespace ak
