#include "loop/modelverifier.h"

#include "jsonfield.h"
#include "pythonlocator.h"
#include "pythonscripts.h"
#include "runloader.h"
#include "runsteering.h"
#include "steerrequest.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>

#include <cmath>

namespace ak {

namespace {

nlohmann::json parseObject(const QByteArray &data)
{
    nlohmann::json j
        = nlohmann::json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    return j.is_object() ? j : nlohmann::json::object();
}

// The model file the run was profiled from. A bundled example's copy lives in the extracted Python
// folder, which moves with every new build: the current build's copy stands in for it.
QString modelPath(const RunConfig &config, const QString &workerDir)
{
    const QString recorded = config.modelPath;
    if (QFileInfo::exists(recorded))
        return recorded;
    const QString name = config.model;
    const QString example = workerDir + QStringLiteral("/examples/") + name + QStringLiteral(".py");
    if (!name.isEmpty() && !name.contains(QLatin1Char('/')) && QFileInfo::exists(example))
        return example;
    return recorded;
}

} // namespace

QString ModelVerifier::torchDtype(const QString &shortName)
{
    if (shortName == QLatin1String("bf16"))
        return QStringLiteral("bfloat16");
    if (shortName == QLatin1String("fp16"))
        return QStringLiteral("float16");
    if (shortName == QLatin1String("fp32") || shortName.isEmpty())
        return QStringLiteral("float32");
    return shortName;
}

QString ModelVerifier::modeError(const QString &mode, const QString &flag, bool compileOn)
{
    if (mode != QLatin1String("eager") && mode != QLatin1String("compile"))
        return QStringLiteral("%1 must be eager or compile, not \"%2\"").arg(flag, mode);
    if (mode == QLatin1String("compile") && !compileOn)
        return QStringLiteral("%1 compile chooses the kernels under torch.compile: it cannot be combined "
                              "with --no-compile")
            .arg(flag);
    return {};
}

double ModelVerifier::pytorchWinsIn(const RunSnapshot &run, const KernelRecord &k, const QString &mode)
{
    // Done or not: verify puts the head in the model, and a head slower than the PyTorch it replaces
    // in the harness has never saved time there (session 24: an attention still being tuned at 0.8x
    // SDPA cost the Llama 11 %). Unmeasured heads (NaN) are offered.
    const double against
        = mode == QLatin1String("compile") ? run.headBestTorchSpeedup(k) : run.headSpeedup(k);
    return against < 1.0 ? against : std::nan("");
}

nlohmann::json ModelVerifier::requestArgs(
    const RunSnapshot &run, const VerifyOptions &options, QString *error)
{
    const RunConfig &config = run.config;
    if (const QString why = modeError(options.mode, QStringLiteral("mode"), options.compile);
        !why.isEmpty()) {
        *error = why;
        return {};
    }
    QString workerDir = PythonScripts::directory(error);
    if (workerDir.isEmpty())
        return {};
    const QString model = modelPath(config, workerDir);
    if (model.isEmpty() || !QFileInfo::exists(model)) {
        *error = QStringLiteral("the run's model file %1 is missing")
                     .arg(model.isEmpty() ? QStringLiteral("(not recorded in run.json)") : model);
        return {};
    }
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelRecord &k : run.kernels) {
        const QString name = KernelRecord::keyOf(k.folder);
        if (!options.kernels.isEmpty() && !options.kernels.contains(name))
            continue;
        // The plug-check found it cannot run in the model (its reason is the kernel's state reason).
        if (k.state == KernelState::Unpluggable)
            continue;
        nlohmann::json entry { { "name", name.toStdString() }, { "op_type", k.opType.toStdString() },
            { "path", QDir(run.runDir).filePath(k.folder + QStringLiteral("/kernel.py")).toStdString() },
            { "dtype", torchDtype(k.dtype).toStdString() } };
        // The cold re-check benches it against PyTorch on the folder's own contract.
        if (!k.contract.isEmpty())
            entry["contract"] = k.contract.toJson();
        // Not offered for the model: its head (done or still tuned) is slower than the PyTorch the
        // mode runs: the number that decided it, and against what.
        const double wins = pytorchWinsIn(run, k, options.mode);
        if (std::isfinite(wins)) {
            entry["pytorch_wins"] = wins;
            entry["pytorch_wins_against"] = options.mode == QLatin1String("compile") ? "best" : "eager";
        }
        kernels.push_back(entry);
    }
    for (const QString &asked : options.kernels)
        if (!run.kernel(asked)) {
            *error = QStringLiteral("%1 has no kernel %2").arg(run.runDir, asked);
            return {};
        }
    QString device = options.device;
    if (device.isEmpty())
        device = config.activity == QLatin1String("cuda") ? QStringLiteral("cuda") : QStringLiteral("cpu");
    nlohmann::json args { { "run_dir", run.runDir.toStdString() }, { "model_path", model.toStdString() },
        { "device", device.toStdString() }, { "dtype", torchDtype(config.dtype).toStdString() },
        { "kernels", kernels }, { "compile", options.compile }, { "rounds", options.rounds },
        { "mode", options.mode.toStdString() }, { "time_limit_s", options.timeoutSec } };
    if (config.allowReducedPrecision) // the run keeps precision shortcuts: so does its re-check
        args["allow_reduced_precision"] = true;
    const QString sha = config.modelSha256;
    if (!sha.isEmpty() && !options.allowChangedModel && model == config.modelPath)
        args["model_sha256"] = sha.toStdString();
    nlohmann::json seeds = nlohmann::json::array();
    for (int i = 0; i < std::max(1, options.seeds); ++i)
        seeds.push_back(int(QRandomGenerator::system()->bounded(1 << 30)));
    args["seeds"] = seeds;
    QFile previous(QDir(run.runDir).filePath(QStringLiteral("verification.json")));
    if (previous.open(QIODevice::ReadOnly))
        args["previous"] = parseObject(previous.readAll());
    return args;
}

VerifyOutcome ModelVerifier::verify(const VerifyOptions &options, const WorkerClient::ProgressFn &progress)
{
    VerifyOutcome out;
    const RunSnapshotPtr run = RunLoader::load(options.runDir, &out.error);
    if (!run) {
        out.environmentError = true;
        return out;
    }
    const nlohmann::json args = requestArgs(*run, options, &out.error);
    if (args.empty()) {
        out.environmentError = true;
        return out;
    }
    const PythonLocator::Choice python = PythonLocator::forRun(run->config.python, options.python);
    if (!python.ok()) {
        out.environmentError = true;
        out.error = QStringLiteral("no usable Python: ") + python.error;
        return out;
    }
    WorkerClient worker;
    worker.setPython(python.python);
    if (options.onWorker)
        options.onWorker(&worker);
    const WorkerReply reply
        = worker.request(QStringLiteral("verify"), args, options.timeoutSec * 1000, progress);
    if (options.onWorker)
        options.onWorker(nullptr);
    if (reply.status == WorkerReply::Status::Cancelled) {
        out.cancelled = true;
        out.error = QStringLiteral("cancelled");
        return out;
    }
    if (!reply.ok()) {
        // The op raises VerifyError / ModelError for what the user must fix; anything else is ours.
        out.error = reply.error;
        out.environmentError = reply.status != WorkerReply::Status::Error;
        if (reply.error.startsWith(QLatin1String("VerifyError: "))
            || reply.error.startsWith(QLatin1String("ModelError: ")))
            out.error = reply.error.section(QStringLiteral(": "), 1);
        return out;
    }
    out.verification = reply.result;
    out.ok = true;
    if (!record(run->runDir, out.verification, &out.recorded, &out.error)) {
        out.ok = false;
        out.environmentError = true;
    }
    return out;
}

ExportOutcome ModelVerifier::exportPackage(const ExportOptions &options)
{
    ExportOutcome out;
    out.environmentError = true; // until the worker has answered
    const RunSnapshotPtr run = RunLoader::load(options.runDir, &out.error);
    if (!run)
        return out;
    QFile f(QDir(options.runDir).filePath(QStringLiteral("verification.json")));
    if (!f.open(QIODevice::ReadOnly)) {
        out.error = QStringLiteral("%1 has no verification.json: run autokernel-cli verify %1 first")
                        .arg(options.runDir);
        return out;
    }
    const QByteArray data = f.readAll();
    const nlohmann::json v
        = nlohmann::json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (!v.is_object() || v.value("format", "") != "autokernel-verification") {
        out.error
            = QStringLiteral("%1: not a verification written by autokernel-cli verify").arg(f.fileName());
        return out;
    }
    if (options.outDir.isEmpty()) {
        out.error = QStringLiteral("no directory to export into");
        return out;
    }
    const QString dir = QDir(options.outDir).absolutePath();
    if (!QDir().mkpath(dir)) {
        out.error = QStringLiteral("cannot create %1").arg(dir);
        return out;
    }
    const PythonLocator::Choice python = PythonLocator::forRun(run->config.python, options.python);
    if (!python.ok()) {
        out.error = QStringLiteral("no usable Python: ") + python.error;
        return out;
    }
    WorkerClient worker;
    worker.setPython(python.python);
    nlohmann::json args { { "run_dir", QDir(options.runDir).absolutePath().toStdString() },
        { "out_dir", dir.toStdString() }, { "verification", v } };
    if (!options.package.isEmpty())
        args["package"] = options.package.toStdString();
    if (!options.mode.isEmpty()) {
        out.error = modeError(options.mode, QStringLiteral("--mode"));
        if (!out.error.isEmpty()) {
            out.environmentError = false;
            return out;
        }
        args["mode"] = options.mode.toStdString();
    }
    const WorkerReply reply = worker.request(QStringLiteral("export"), args, options.timeoutSec * 1000);
    if (!reply.ok()) {
        out.error = reply.error;
        out.environmentError = reply.status != WorkerReply::Status::Error;
        return out;
    }
    out.ok = true;
    out.environmentError = false;
    out.packageDir = jsonfield::text(reply.result, "package_dir");
    out.kernels = int(reply.result.value("kernels", nlohmann::json::array()).size());
    for (const auto &file : reply.result.value("files", nlohmann::json::array()))
        if (file.is_string())
            out.files << QString::fromStdString(file.get<std::string>());
    out.modelSpeedup = jsonfield::number(v, "model_speedup", 0);
    out.mode = jsonfield::text(reply.result, "mode");
    out.chosenInMode = jsonfield::text(reply.result, "chosen_in_mode");
    return out;
}

bool ModelVerifier::record(
    const QString &runDir, const nlohmann::json &verification, QString *how, QString *error)
{
    // The steering path every writer outside the loop takes: committed now when nobody writes the
    // run, else queued for the loop writing it, which records it at its next experiment boundary.
    const RunSteering::Outcome o = RunSteering::steer(runDir, SteerRequest::verification(verification));
    *how = o.kind == RunSteering::Outcome::Kind::Queued
        ? QStringLiteral("queued for the process writing the run")
        : QStringLiteral("committed");
    if (!o.ok())
        *error = o.message;
    return o.ok();
}

} // namespace ak
