#include "runcreator.h"

#include "amdahl.h"
#include "contractshapes.h"
#include "jsonfield.h"
#include "modelprofiler.h"
#include "plugcheck.h"
#include "pythonlocator.h"
#include "runstore.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>

#include <algorithm>
#include <optional>

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
              QStringLiteral("cross_entropy"), QStringLiteral("rotary_embedding"), QStringLiteral("reduce"),
              QStringLiteral("add_rmsnorm"), QStringLiteral("add_layernorm"), QStringLiteral("bmm") };
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
    if (o.allowReducedPrecision)
        config["settings"] = { { "allow_reduced_precision", true } };
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

namespace {

// The op type a profile row's folder implements: its class, or the activation itself (exact GELU in a
// ViT is a tenth of its time: "activation" alone names no kernel contract).
QString targetType(const KernelRecord &k, const OpCall &call)
{
    // A matmul whose right operand is batched too (hand-written attention) is a bmm folder's.
    if (k.opType == QLatin1String("matmul") && ContractShapes::batchedRight(call))
        return QStringLiteral("bmm");
    if (RunCreator::isTarget(k.opType))
        return k.opType;
    if (k.opType == QLatin1String("activation")) {
        const QString op = OpCall::bareOp(call.atenOp);
        if (op == QLatin1String("gelu") || op == QLatin1String("silu"))
            return op;
    }
    return QString();
}

// The raw facts each call site recorded (profile.json's call_sites[i].call), for the harness to turn
// into the folder's contract attributes.
nlohmann::json siteFacts(const nlohmann::json &callSites)
{
    nlohmann::json facts = nlohmann::json::array();
    if (callSites.is_array())
        for (const nlohmann::json &site : callSites)
            if (site.is_object() && site.contains("call") && site["call"].is_object())
                facts.push_back(site["call"]);
    return facts;
}

// What a region row swallows (akregions.py's "covers"), each op once in the order it runs; a matmul
// row's fused activation too.
QStringList coveredOps(const nlohmann::json &covers)
{
    QStringList out;
    if (covers.is_array())
        for (const nlohmann::json &c : covers) {
            const QString op = jsonfield::text(c, "op");
            if (!op.isEmpty() && !out.contains(op))
                out << op;
        }
    return out;
}

QStringList siteModules(const nlohmann::json &callSites)
{
    QStringList out;
    if (callSites.is_array())
        for (const nlohmann::json &site : callSites) {
            QString m = jsonfield::text(site, "module");
            if (m.isEmpty())
                m = QStringLiteral("<model>");
            if (!out.contains(m))
                out << m;
        }
    return out;
}

} // namespace

namespace {

// One kernel folder before it enters the run: the profile rows it covers and the modules they ran in.
struct FolderDraft
{
    KernelRecord record;
    QByteArray py;
    QStringList sites;
    QList<int> rows;
};

// The `extract` op for profile row `index`: the starter kernel.py with the model's shapes and the
// contract its sites' facts give. Nothing, with a note, when the worker has none to give.
std::optional<FolderDraft> draftFolder(WorkerClient &worker, const ProfileReport &report, int index,
    const QString &type, const nlohmann::json &shapes, QStringList *notes, bool *noExtractOp)
{
    const KernelRecord &k = report.kernels[index];
    const nlohmann::json facts = siteFacts(report.calls[index].callSites);
    nlohmann::json args { { "op_type", type.toStdString() }, { "device", report.activity.toStdString() },
        { "dtype", k.dtype.toStdString() }, { "shapes", shapes }, { "sites", facts },
        { "name", QStringLiteral("%1 (%2, rank %3)").arg(k.name, k.atenOp).arg(k.rank).toStdString() } };
    const WorkerReply reply = worker.request(QStringLiteral("extract"), args, 120000);
    if (!reply.ok() && reply.error.contains(QLatin1String("is not available"))) {
        *notes << QStringLiteral("no kernel folders: the worker has no extract op (%1)").arg(reply.error);
        *noExtractOp = true;
        return std::nullopt;
    }
    if (!reply.ok() || !reply.result.is_object() || !reply.result.contains("kernel_py")
        || !reply.result["kernel_py"].is_string()) {
        *notes << QStringLiteral("rank %1 (%2): no kernel.py extracted: %3")
                      .arg(k.rank)
                      .arg(type, reply.ok() ? QStringLiteral("reply has no kernel_py") : reply.error);
        return std::nullopt;
    }
    FolderDraft d;
    d.record = k;
    d.record.opType = type;
    d.record.folder = QStringLiteral("kernels/%1-%2").arg(k.rank, 2, 10, QLatin1Char('0')).arg(type);
    if (const nlohmann::json *c = jsonfield::object(reply.result, "contract"))
        d.record.contract = KernelContract::fromJson(*c);
    if (d.record.contract.callable.isEmpty() && !facts.empty())
        d.record.contract.callable = QStringLiteral("%1:%2").arg(
            jsonfield::text(facts[0], "kind"), jsonfield::text(facts[0], "name"));
    d.record.contract.covers = coveredOps(report.calls[index].covers);
    d.py = QByteArray::fromStdString(reply.result["kernel_py"].get<std::string>());
    d.sites = siteModules(report.calls[index].callSites);
    d.rows << index;
    return d;
}

// A row of a call whose aten op carries no operands of its own (the rotary's cat, add and neg beside its
// multiplies; a copy or a memset inside an addmm) joins the folder that replaces that call at those
// sites: the row names the folder in profile.json (verify's per-folder eager time sums its rows), and its
// time is the folder's, so the folder is ranked by everything it replaces (the H100 Llama's rotary:
// its multiplies were 5.5 % of the time, the whole call 14 %). Only where exactly one folder of the
// op type stands for that call there; otherwise the row stays without one.
void attachToFolder(ProfileReport &report, int index, const QString &type, QList<FolderDraft> &drafts)
{
    const nlohmann::json facts = siteFacts(report.calls[index].callSites);
    if (facts.empty())
        return;
    const QString callable
        = QStringLiteral("%1:%2").arg(jsonfield::text(facts[0], "kind"), jsonfield::text(facts[0], "name"));
    const QStringList sites = siteModules(report.calls[index].callSites);
    FolderDraft *match = nullptr;
    for (FolderDraft &d : drafts) {
        if (d.record.opType != type || d.record.contract.callable != callable
            || !std::all_of(
                sites.cbegin(), sites.cend(), [&](const QString &m) { return d.sites.contains(m); }))
            continue;
        if (match)
            return; // two folders could stand for it
        match = &d;
    }
    if (!match)
        return;
    match->rows << index;
    match->record.timeUs += report.kernels[index].timeUs;
}

} // namespace

void RunCreator::extractKernels(WorkerClient &worker, RunStore &store, Result &r, const Callbacks &callbacks)
{
    ProfileReport &report = r.report;
    // The folder is decided by what the model computes, not by where: rows share one only when op
    // type, shapes and contract (callable, attributes, refused or not) are equal. Two norms with
    // another eps do not share a folder; the same norm in every layer does. Every profile row a folder
    // covers names it in profile.json ("folder"), so verify finds all its call sites.
    QList<FolderDraft> drafts;
    QHash<QString, int> folderOf;
    QList<QPair<int, QString>> withoutOperands; // rows of a call that carry no operands, with their type
    for (int index = 0; index < report.kernels.size(); ++index) {
        if (m_cancelled)
            return;
        const QString type = targetType(report.kernels[index], report.calls[index]);
        if (type.isEmpty())
            continue;
        const std::vector<ContractShapes::Shape> shapes = ContractShapes::of(type, report.calls[index]);
        if (shapes.empty()) {
            withoutOperands.append({ index, type }); // e.g. a copy inside addmm: attachToFolder below
            continue;
        }
        if (callbacks.step)
            callbacks.step(
                QStringLiteral("kernel.py for rank %1 (%2)").arg(report.kernels[index].rank).arg(type));
        bool noExtractOp = false;
        std::optional<FolderDraft> d
            = draftFolder(worker, report, index, type, shapes, &r.notes, &noExtractOp);
        if (noExtractOp)
            break;
        if (!d)
            continue;
        const KernelContract &c = d->record.contract;
        // A rotary plugged through the model's own function (apply_rotary_pos_emb(q, k, cos, sin)) is one
        // call rotating q and k, whose ops come in two shapes under grouped-query attention: one folder,
        // tuned on its first (largest) row and run on both. Two folders of one call each claimed every
        // site while the plug routed the call through one of them (H100 Llama, session 24).
        const bool oneCall
            = type == QLatin1String("rotary_embedding") && c.callable.startsWith(QLatin1String("function:"));
        const QString key = type
            + (oneCall ? QString() : QString::fromStdString(nlohmann::json(shapes).dump())) + c.callable
            + QString::fromStdString(c.attrs.dump()) + (c.refused.isEmpty() ? u'+' : u'-');
        if (const auto it = folderOf.constFind(key); it != folderOf.constEnd()) {
            // The folder replaces this row too (another aten kernel of the same call): its time is the
            // folder's, so a norm of six elementwise kernels ranks by all six, not by the largest.
            drafts[*it].rows << index;
            drafts[*it].record.timeUs += d->record.timeUs;
            for (const QString &m : std::as_const(d->sites))
                if (!drafts[*it].sites.contains(m))
                    drafts[*it].sites << m;
        } else if (r.kernelFolders + drafts.size() < m_options.top) {
            folderOf.insert(key, int(drafts.size()));
            drafts.push_back(*d);
        }
    }
    if (m_cancelled)
        return;
    for (const auto &[index, type] : std::as_const(withoutOperands))
        attachToFolder(report, index, type, drafts);
    // A folder's share, headroom and model speedup at the roof from its whole time (the rows it covers),
    // on the first row's floor.
    for (FolderDraft &d : drafts)
        Amdahl::fill(d.record, report.totalUs, report.fraction);
    std::vector<PlugCandidate> candidates;
    for (FolderDraft &d : drafts)
        candidates.push_back({ &d.record, d.py, d.sites });
    if (callbacks.step && !candidates.empty())
        callbacks.step(QStringLiteral("plugging each starter into the model"));
    PlugCheck::run(worker, report, candidates, &r.notes);
    QString error;
    for (FolderDraft &d : drafts) {
        if (m_cancelled)
            return;
        if (store.addKernel(d.record, d.py, &error).id == 0) {
            r.notes << QStringLiteral("rank %1: %2").arg(d.record.rank).arg(error);
            continue;
        }
        for (int row : std::as_const(d.rows)) {
            report.kernels[row].folder = d.record.folder;
            report.kernels[row].contract = d.record.contract;
        }
        ++r.kernelFolders;
    }
}

} // namespace ak
