// autokernel-cli bench: check and time one kernel.py with the fixed harness, in the user's Python.
#include "clicommand.h"

#include "cpudevice.h"
#include "devicedetector.h"
#include "loop/harnessclient.h"
#include "pythonlocator.h"
#include "roofmeter.h"
#include "runloader.h"
#include "workerclient.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QTextStream>

#include <cmath>
#include <iostream>

namespace ak::cli {

namespace {

QString fixed(double v, int decimals)
{
    return Metrics::has(v) ? QString::number(v, 'f', decimals) : QStringLiteral("—");
}

// "91.0% of the measured roof (spec 81.8%)", or "...% of the spec roof" when nothing was measured.
QString roofText(const Metrics &m)
{
    if (m.roof.isEmpty() || m.roof == QLatin1String("spec"))
        return QStringLiteral("%1% of the spec roof").arg(fixed(m.pctPeak, 1));
    return QStringLiteral("%1% of the measured roof (spec %2)")
        .arg(fixed(m.pctPeak, 1),
            Metrics::has(m.pctPeakSpec) ? fixed(m.pctPeakSpec, 1) + QLatin1Char('%')
                                        : QStringLiteral("none"));
}

void printTable(const BenchRequest &req, const BenchResult &r, const QString &python)
{
    QTextStream out(stdout);
    const auto row = [&out](const QString &label, const QString &value) {
        out << label.leftJustified(12) << ' ' << value << '\n';
    };
    row(QStringLiteral("kernel"), req.kernelPath);
    if (!r.kernelType.isEmpty())
        row(QStringLiteral("type"), r.kernelType);
    QString device = req.device;
    if (!req.deviceInfo.name.isEmpty())
        device += QStringLiteral(" (%1)").arg(req.deviceInfo.name);
    const QString dtype = r.raw.is_object() && r.raw.contains("dtype") && r.raw["dtype"].is_string()
        ? QString::fromStdString(r.raw["dtype"].get<std::string>())
        : req.dtype;
    row(QStringLiteral("device"),
        device + (dtype.isEmpty() ? QString() : QStringLiteral(", ") + dtype)
            + (req.quick ? QStringLiteral(", quick") : QString()));
    row(QStringLiteral("python"), python);
    row(QStringLiteral("status"),
        BenchResult::statusName(r.status)
            + (r.correct ? QStringLiteral(" (correct)") : QStringLiteral(" (not correct)")));
    if (!r.failure.isEmpty())
        row(QStringLiteral("failure"), r.failure);
    if (!r.stages.isEmpty()) {
        out << "stages\n";
        for (const BenchStage &s : r.stages)
            out << "  " << (s.passed ? "pass " : "FAIL ") << s.name.leftJustified(14) << ' ' << s.detail
                << '\n';
    }
    const Metrics &m = r.metrics;
    if (Metrics::has(m.latencyUs)) {
        row(QStringLiteral("latency"),
            QStringLiteral("%1 us   reference %2 us   speedup %3x   noise %4%")
                .arg(fixed(m.latencyUs, 2), fixed(m.refLatencyUs, 2), fixed(m.speedup, 3),
                    fixed(m.noisePct, 1)));
        row(QStringLiteral("throughput"),
            QStringLiteral("%1 TFLOP/s   %2 GB/s   %3   %4")
                .arg(fixed(m.tflops, 4), fixed(m.gbps, 1),
                    m.bound.isEmpty() ? QStringLiteral("bound unknown") : m.bound + QStringLiteral("-bound"),
                    Metrics::has(m.pctPeak) ? roofText(m) : QStringLiteral("no device peak known")));
        // The best PyTorch (#43 item 2): torch.compile of the same reference, or why there is none.
        if (Metrics::has(m.compileLatencyUs))
            row(QStringLiteral("compiled"),
                QStringLiteral("%1 us   speedup %2x   (%3)")
                    .arg(fixed(m.compileLatencyUs, 2), fixed(m.compileSpeedup, 3), m.compileNote));
        else if (!m.compileNote.isEmpty())
            row(QStringLiteral("compiled"), m.compileNote);
        if (!m.judge.isEmpty())
            row(QStringLiteral("judge"), QStringLiteral("%1, %2").arg(m.judge, m.isolation));
        if (Metrics::has(m.peakVramMb))
            row(QStringLiteral("peak memory"), QStringLiteral("%1 MB").arg(fixed(m.peakVramMb, 1)));
    }
    row(QStringLiteral("time"), QStringLiteral("%1 s").arg(r.seconds, 0, 'f', 2));
    if (!r.traceback.isEmpty())
        out << "\n" << r.traceback.trimmed() << '\n';
    if ((r.status == BenchStatus::Crash || r.status == BenchStatus::Timeout)
        && !r.stderrTail.trimmed().isEmpty()) {
        const QStringList lines = r.stderrTail.trimmed().split(QLatin1Char('\n'));
        out << "\nlast worker output:\n"
            << lines.mid(qMax(0, int(lines.size()) - 20)).join(QLatin1Char('\n')) << '\n';
    }
}

// The contract of kernel folder `kernel` of run `runDir` (#38): what the loop sends with every bench, so
// a kernel judged by hand is judged as the loop judges it. Empty with `error` set when it cannot be read.
bool contractFromRun(const QString &runDir, const QString &kernel, BenchRequest *req, QString *error)
{
    const RunSnapshotPtr run = RunLoader::load(runDir, error);
    if (!run)
        return false;
    const KernelRecord *k = run->kernel(KernelRecord::keyOf(kernel));
    if (!k) {
        *error = QStringLiteral("%1 has no kernel folder %2").arg(runDir, kernel);
        return false;
    }
    if (!k->contract.isEmpty())
        req->extra["contract"] = k->contract.toJson();
    return true;
}

// bench's options, added to `parser` on construction.
struct BenchOptions
{
    explicit BenchOptions(QCommandLineParser &parser)
    {
        parser.addOptions({ device, dtype, quick, json, python, timeout, run, kernelName, help });
    }

    const QCommandLineOption device { QStringLiteral("device"),
        QStringLiteral("cpu or cuda (default: cuda when a GPU is detected)"), QStringLiteral("DEVICE") };
    const QCommandLineOption dtype { QStringLiteral("dtype"),
        QStringLiteral("fp32, fp16 or bf16 (default: the kernel's TEST_DTYPES)"), QStringLiteral("DTYPE") };
    const QCommandLineOption quick { QStringLiteral("quick"), QStringLiteral("fewer sizes and repetitions") };
    const QCommandLineOption json { QStringLiteral("json"), QStringLiteral("print one JSON object") };
    const QCommandLineOption python { QStringLiteral("python"),
        QStringLiteral("the Python interpreter with torch (default: auto-detect)"), QStringLiteral("PY") };
    const QCommandLineOption timeout { QStringLiteral("timeout"),
        QStringLiteral("wall-clock limit in seconds (default %1)").arg(HarnessClient::kDefaultTimeLimitSec),
        QStringLiteral("SEC") };
    const QCommandLineOption run { QStringLiteral("run"),
        QStringLiteral("judge against this run's folder contract (with --kernel), as the loop does"),
        QStringLiteral("RUN_DIR") };
    const QCommandLineOption kernelName { QStringLiteral("kernel"),
        QStringLiteral("the run's kernel folder whose contract applies (e.g. 03-rmsnorm)"),
        QStringLiteral("NAME") };
    const QCommandLineOption help { { QStringLiteral("h"), QStringLiteral("help") },
        QStringLiteral("show this help") };
};

// The request the command line asks for, checked in the order the options are documented; the usage
// error ("bench: ...") when an argument is wrong, else empty.
QString requestFrom(const QCommandLineParser &parser, const BenchOptions &o, BenchRequest *req)
{
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return QStringLiteral("bench: expected one KERNEL_PY, got %1").arg(positional.size());
    req->kernelPath = QFileInfo(positional.first()).absoluteFilePath();
    req->quick = parser.isSet(o.quick);
    if (parser.isSet(o.device)) {
        req->device = parser.value(o.device).toLower();
        if (req->device != QLatin1String("cpu") && req->device != QLatin1String("cuda"))
            return QStringLiteral("bench: --device must be cpu or cuda, not '%1'")
                .arg(parser.value(o.device));
    }
    if (parser.isSet(o.dtype)) {
        Precision p = Precision::FP32;
        if (!parsePrecision(parser.value(o.dtype), &p)
            || (p != Precision::FP32 && p != Precision::FP16 && p != Precision::BF16))
            return QStringLiteral("bench: --dtype must be fp32, fp16 or bf16, not '%1'")
                .arg(parser.value(o.dtype));
        req->dtype = precisionName(p);
    }
    if (parser.isSet(o.timeout)) {
        bool ok = false;
        const double sec = parser.value(o.timeout).toDouble(&ok);
        if (!ok || !(sec >= 1) || sec > 86400)
            return QStringLiteral("bench: --timeout must be a number of seconds (1 to 86400), not '%1'")
                .arg(parser.value(o.timeout));
        req->timeLimitSec = int(std::ceil(sec));
    }
    const QFileInfo kernel(req->kernelPath);
    if (!kernel.exists())
        return QStringLiteral("bench: kernel file '%1' does not exist").arg(positional.first());
    if (!kernel.isFile() || !kernel.isReadable())
        return QStringLiteral("bench: '%1' is not a readable file").arg(positional.first());
    if (parser.isSet(o.run) != parser.isSet(o.kernelName))
        return QStringLiteral("bench: --run and --kernel go together");
    if (parser.isSet(o.run)) {
        QString why;
        if (!contractFromRun(parser.value(o.run), parser.value(o.kernelName), req, &why))
            return QStringLiteral("bench: ") + why;
    }
    return QString();
}

// The device and its peaks. Peaks come from this process's detection (NVML / CUDA driver / ROCm SMI,
// no torch here); without --device, cuda when a GPU is detected.
void resolveDevice(BenchRequest *req, bool deviceGiven)
{
    if (req->device == QLatin1String("cpu")) {
        req->deviceInfo = cpuDevice();
        return;
    }
    const DeviceInfo gpu = DeviceDetector::detect();
    if (!deviceGiven)
        req->device = gpu.available ? QStringLiteral("cuda") : QStringLiteral("cpu");
    // --device cuda without a detected GPU: no peaks (torch may still see one, e.g. without NVML).
    req->deviceInfo = gpu.available || deviceGiven ? gpu : cpuDevice();
}

} // namespace

int runBench(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Check a kernel.py for correctness (every stage, anti-cheat) and time it against its PyTorch\n"
        "reference, in the user's Python. Exit code: 0 correct, 1 not correct (incorrect, error, timeout,\n"
        "crash), 2 usage or environment error."));
    parser.addPositionalArgument(QStringLiteral("KERNEL_PY"), QStringLiteral("the kernel file to benchmark"));
    const BenchOptions options(parser);
    if (!parser.parse(QStringList { QStringLiteral("autokernel-cli bench") } + args))
        return printUsageError(QStringLiteral("bench: ") + parser.errorText());
    if (parser.isSet(options.help)) {
        QTextStream(stdout) << parser.helpText();
        return 0;
    }
    BenchRequest req;
    if (const QString usage = requestFrom(parser, options, &req); !usage.isEmpty())
        return printUsageError(usage);

    QTextStream err(stderr);
    PythonLocator locator;
    locator.setExplicit(parser.value(options.python));
    const PythonLocator::Choice choice = locator.locate();
    if (!choice.ok()) {
        err << "autokernel-cli: bench: " << choice.error << Qt::endl;
        return 2;
    }
    resolveDevice(&req, parser.isSet(options.device));

    WorkerClient worker;
    worker.setPython(choice.python);
    // % of roof against what the device measurably does (cached after the first use; docs/numbers.md).
    RoofMeter::Request roofs;
    roofs.device = req.device;
    roofs.dtype = RoofMeter::dtypeFor(req.device, req.dtype);
    QString roofError;
    if (!RoofMeter::measure(&worker, roofs, &req.deviceInfo.measured, &roofError))
        err << "autokernel-cli: bench: " << roofError << ": % of roof against the spec sheet" << Qt::endl;
    HarnessClient harness(&worker);
    const bool asJson = parser.isSet(options.json);
    WorkerClient::ProgressFn progress;
    if (!asJson) {
        progress = [&err](const QString &message, double fraction) {
            if (fraction >= 0)
                err << QStringLiteral("[%1%] ").arg(int(fraction * 100), 3) << message << Qt::endl;
            else
                err << "       " << message << Qt::endl;
        };
    }
    const BenchResult result = harness.bench(req, progress);

    if (asJson) {
        nlohmann::json out = result.toJson();
        out["kernel_path"] = req.kernelPath.toStdString();
        out["python"] = choice.python.toStdString();
        std::cout << out.dump(2) << std::endl;
    } else {
        printTable(req, result,
            choice.python
                + (choice.torchVersion.isEmpty() ? QString()
                                                 : QStringLiteral(" (torch %1)").arg(choice.torchVersion)));
    }
    if (result.environmentError) {
        err << "autokernel-cli: bench: " << result.failure << Qt::endl;
        return 2;
    }
    return result.correct ? 0 : 1;
}

} // namespace ak::cli
