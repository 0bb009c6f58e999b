// autokernel-cli doctor [--python PY] [--json]: what a user runs first on a new machine (a GPU server
// with the bundle just unpacked): this program's version, the embedded Python that statically checks
// kernel.py, the interpreter with torch the worker will use, Triton, the GPU as the drivers and as
// torch see it, and the bubblewrap that sandboxes candidate kernels. Each line says ok, warning or
// error with what to do; exit 0 without errors, 1 with any.
#include "clicommand.h"

#include "buildinfo.h"
#include "devicedetector.h"
#include "jsonfield.h"
#include "kernelstaticcheck.h"
#include "pythonlocator.h"
#include "roofmeter.h"
#include "workerclient.h"

#include <nlohmann/json.hpp>

#include <QCommandLineParser>
#include <QTextStream>

namespace ak::cli {

namespace {

struct Finding
{
    QString level; // "ok" | "warning" | "error" | "info"
    QString what; // "torch"
    QString text;
};

// What the device measurably does (measured on first use, then from the cache; again with
// --measure-roofs), beside the spec sheet's numbers: the roofs every "% of roof" is taken against.
Finding roofsFinding(WorkerClient *worker, const DeviceInfo &spec, bool gpu, bool force, const QString &dtype)
{
    RoofMeter::Request request;
    request.device = gpu ? QStringLiteral("cuda") : QStringLiteral("cpu");
    request.dtype = dtype;
    request.force = force;
    MeasuredRoofs m;
    QString error;
    if (!RoofMeter::measure(worker, request, &m, &error))
        return { QStringLiteral("warning"), QStringLiteral("roofs"),
            error + QStringLiteral(": % of roof falls back to the spec sheet") };
    QString text = m.summary();
    const QString prec = RoofMeter::dtypeFor(request.device, dtype);
    Precision p = Precision::FP32;
    parsePrecision(prec, &p);
    if (gpu && (spec.bandwidthGBs > 0 || spec.peak(p) > 0))
        text += QStringLiteral("; spec sheet: %1 GB/s (copy reaches %2%), %3 %4 TFLOP/s (matmul reaches %5%)")
                    .arg(spec.bandwidthGBs, 0, 'f', 0)
                    .arg(spec.bandwidthGBs > 0 ? 100.0 * m.bandwidthGBs / spec.bandwidthGBs : 0.0, 0, 'f', 0)
                    .arg(prec)
                    .arg(spec.peak(p), 0, 'g', 4)
                    .arg(spec.peak(p) > 0 ? 100.0 * m.tflops[size_t(p)] / spec.peak(p) : 0.0, 0, 'f', 0);
    return { QStringLiteral("ok"), QStringLiteral("roofs"), text };
}

void addDoctorOptions(QCommandLineParser &p)
{
    p.setApplicationDescription(QStringLiteral(
        "Check this machine before a run: Python with torch, Triton, the GPU, the sandbox, the embedded "
        "Python. Exit 0 when nothing is an error."));
    p.addHelpOption();
    p.addOption({ QStringLiteral("python"),
        QStringLiteral("the interpreter to check (default: the one a run would use)"),
        QStringLiteral("PY") });
    p.addOption({ QStringLiteral("json"), QStringLiteral("print the findings as JSON") });
    p.addOption({ QStringLiteral("measure-roofs"),
        QStringLiteral("measure the device's copy bandwidth and matmul throughput again (else cached)") });
    p.addOption({ QStringLiteral("dtype"),
        QStringLiteral("the matmul roof's dtype (default bf16 on a GPU, fp32 on the CPU)"),
        QStringLiteral("DTYPE") });
}

Finding embeddedPythonFinding()
{
    const QString embedded = embeddedPythonStatus();
    const bool embeddedOk = !embedded.isEmpty() && embedded.at(0).isDigit();
    return { embeddedOk ? QStringLiteral("ok") : QStringLiteral("error"), QStringLiteral("embedded Python"),
        embeddedOk ? QStringLiteral("Python %1 (static checks of kernel.py)").arg(embedded)
                   : QStringLiteral("%1 — a bundle sets AUTOKERNEL_EMBEDDED_PYTHONHOME to its python/ folder")
                         .arg(embedded) };
}

// The interpreter's facts (the worker's doctor reply), then the judge's (bubblewrap, cgroup): two ops,
// one per layer.
nlohmann::json doctorWorkerFacts(WorkerClient &worker, const WorkerReply &doctorReply)
{
    nlohmann::json j = doctorReply.result;
    const WorkerReply judge = worker.request(QStringLiteral("judge_facts"), nlohmann::json::object(), 120000);
    if (judge.status == WorkerReply::Status::Ok && judge.result.is_object())
        j.update(judge.result);
    else
        j["bwrap_why"]
            = QStringLiteral("the judge's facts could not be read: %1").arg(judge.error).toStdString();
    return j;
}

// torch's import, the GPU as torch sees it, and Triton.
void addDoctorTorchFindings(
    QVector<Finding> &out, const nlohmann::json &j, const DeviceInfo &device, bool gpu)
{
    if (!jsonfield::text(j, "torch_error").isEmpty())
        out.append({ QStringLiteral("error"), QStringLiteral("torch"),
            QStringLiteral("import torch failed: %1").arg(jsonfield::text(j, "torch_error")) });
    out.append({ gpu || !device.available ? QStringLiteral("info") : QStringLiteral("warning"),
        QStringLiteral("GPU (torch)"),
        gpu ? QStringLiteral("%1 (CUDA %2)")
                  .arg(jsonfield::text(j, "gpu"), jsonfield::text(j, "cuda_version"))
            : device.available
            ? QStringLiteral("torch sees no GPU although the drivers do: a CPU-only torch build?")
            : QStringLiteral("none: kernels run and are timed on the CPU") });
    const QString triton = jsonfield::text(j, "triton");
    out.append({ !triton.isEmpty() ? QStringLiteral("ok")
            : gpu                  ? QStringLiteral("warning")
                                   : QStringLiteral("info"),
        QStringLiteral("Triton"),
        !triton.isEmpty()
            ? triton
            : QStringLiteral("not installed: GPU kernels (Triton starters) cannot run; CPU ones can") });
}

// How the judge sandboxes a candidate kernel: bubblewrap, and the cgroup that contains its processes.
void addDoctorSandboxFindings(QVector<Finding> &out, const nlohmann::json &j)
{
    const QString bwrap = jsonfield::text(j, "bwrap");
    out.append(
        { bwrap.isEmpty() ? QStringLiteral("warning") : QStringLiteral("ok"), QStringLiteral("sandbox"),
            bwrap.isEmpty()
                ? QStringLiteral("no bubblewrap (%1): candidate kernels would run unsandboxed; install "
                                 "bubblewrap")
                      .arg(jsonfield::text(j, "bwrap_why"))
                : QStringLiteral("bubblewrap at %1").arg(bwrap) });
    // How the judge contains a kernel's processes (#39): without a writable cgroup it is weaker,
    // and the user must know.
    const QString cgroupText = jsonfield::text(j, "cgroup_text");
    if (!cgroupText.isEmpty())
        out.append({ jsonfield::text(j, "cgroup_level") == QLatin1String("ok") ? QStringLiteral("ok")
                                                                               : QStringLiteral("warning"),
            QStringLiteral("cgroup"), cgroupText });
}

// The interpreter a run would use (or --python's), then what its worker and judge report.
void addDoctorPythonFindings(QVector<Finding> &out, const QCommandLineParser &p, const DeviceInfo &device)
{
    PythonLocator locator;
    locator.setExplicit(p.value(QStringLiteral("python")));
    const PythonLocator::Choice python = locator.locate();
    if (!python.ok()) {
        out.append({ QStringLiteral("error"), QStringLiteral("Python with torch"),
            QStringLiteral(
                "none found: %1 — install PyTorch, or name an interpreter that has it with --python or "
                "$AUTOKERNEL_PYTHON")
                .arg(python.error) });
        return;
    }
    out.append({ QStringLiteral("ok"), QStringLiteral("Python with torch"),
        QStringLiteral("%1 (%2), torch %3").arg(python.python, python.source, python.torchVersion) });
    WorkerClient worker;
    worker.setPython(python.python);
    const WorkerReply r = worker.request(QStringLiteral("doctor"), nlohmann::json::object(), 120000);
    if (r.status != WorkerReply::Status::Ok) {
        out.append({ QStringLiteral("error"), QStringLiteral("worker"),
            QStringLiteral("the worker did not answer in %1: %2").arg(python.python, r.error) });
        return;
    }
    const nlohmann::json j = doctorWorkerFacts(worker, r);
    const bool gpu = jsonfield::boolean(j, "cuda", false);
    addDoctorTorchFindings(out, j, device, gpu);
    addDoctorSandboxFindings(out, j);
    if (jsonfield::text(j, "torch_error").isEmpty())
        out.append(roofsFinding(&worker, device, gpu, p.isSet(QStringLiteral("measure-roofs")),
            p.value(QStringLiteral("dtype"))));
}

// Prints the findings (JSON or one line each with a verdict) and returns the exit code: 1 with any error.
int printDoctorFindings(const QVector<Finding> &out, bool asJson)
{
    int errors = 0;
    for (const Finding &f : out)
        errors += f.level == QLatin1String("error");
    QTextStream stdoutStream(stdout);
    if (asJson) {
        nlohmann::json j = nlohmann::json::array();
        for (const Finding &f : out)
            j.push_back({ { "level", f.level.toStdString() }, { "what", f.what.toStdString() },
                { "text", f.text.toStdString() } });
        stdoutStream << QString::fromStdString(j.dump(2)) << Qt::endl;
    } else {
        for (const Finding &f : out)
            stdoutStream << QStringLiteral("%1 %2: %3").arg(f.level.leftJustified(8), f.what, f.text)
                         << Qt::endl;
        stdoutStream << (errors ? QStringLiteral("%1 error(s): fix them before a run").arg(errors)
                                : QStringLiteral("ready"))
                     << Qt::endl;
    }
    return errors ? 1 : 0;
}

} // namespace

int runDoctor(const QStringList &args)
{
    QCommandLineParser p;
    addDoctorOptions(p);
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli doctor") } + args))
        return printUsageError(QStringLiteral("doctor: ") + p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }

    QVector<Finding> out;
    out.append({ QStringLiteral("info"), QStringLiteral("program"),
        BuildInfo::versionLine(QStringLiteral("autokernel-cli")) });
    out.append(embeddedPythonFinding());
    QStringList detectLog;
    const DeviceInfo device = DeviceDetector::detect(0, &detectLog);
    out.append({ QStringLiteral("info"), QStringLiteral("GPU (drivers)"),
        device.available ? device.summary()
                         : QStringLiteral("none detected (NVML, CUDA driver, ROCm SMI)") });
    addDoctorPythonFindings(out, p, device);
    return printDoctorFindings(out, p.isSet(QStringLiteral("json")));
}

} // namespace ak::cli
