// autokernel-cli profile: profile a whole model, rank its kernels by Amdahl's law and create a run.
#include "clicommand.h"

#include "runcreator.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QTextStream>

namespace ak::cli {

namespace {

QString fmt(double v, int decimals, const QString &none = QStringLiteral("—"))
{
    return v > 0 ? QString::number(v, 'f', decimals) : none;
}

void printTable(const ProfileReport &r, int rows)
{
    QTextStream out(stdout);
    out << "model    " << r.model << " (" << r.modelPath << ")\n"
        << "device   " << r.device.summary() << "\n"
        << "timed    " << r.activity << ", " << r.dtype << ", " << r.iterations << " iterations after "
        << r.warmup << " warm-up; " << QString::number(r.totalUs / 1000.0, 'f', 3) << " ms of " << r.activity
        << " time per iteration\n\n";
    out << QStringLiteral("%1  %2 %3 %4  %5 %6 %7 %8  %9\n")
               .arg(QStringLiteral("rank"), QStringLiteral("share").rightJustified(6),
                   QStringLiteral("time us").rightJustified(10), QStringLiteral("calls").rightJustified(5),
                   QStringLiteral("op type").leftJustified(16), QStringLiteral("floor us").rightJustified(9),
                   QStringLiteral("max x").rightJustified(7), QStringLiteral("model x").rightJustified(7),
                   QStringLiteral("kernel (aten op)"));
    for (int i = 0; i < std::min(rows, int(r.kernels.size())); ++i) {
        const KernelRecord &k = r.kernels[i];
        const double floorIter = k.floorUs * std::max(1, k.calls);
        out << QStringLiteral("%1  %2 %3 %4  %5 %6 %7 %8  %9 (%10)\n")
                   .arg(QString::number(k.rank).rightJustified(4),
                       QString(QString::number(100.0 * k.share, 'f', 1) + QLatin1Char('%')).rightJustified(6),
                       QString::number(k.timeUs, 'f', 1).rightJustified(10),
                       QString::number(k.calls).rightJustified(5), k.opType.leftJustified(16),
                       fmt(floorIter, 1).rightJustified(9), fmt(k.maxSpeedup, 1).rightJustified(7),
                       fmt(k.floorUs > 0 ? k.modelSpeedupAt90 : 0, 3).rightJustified(7), k.name.left(60),
                       k.atenOp.isEmpty() ? QStringLiteral("?") : k.atenOp);
    }
    if (r.kernels.size() > rows)
        out << "  ... " << (r.kernels.size() - rows) << " more in profile.json\n";
    out << "\nprojected whole-model speedup at " << int(r.fraction * 100) << "% of each roof:";
    bool any = false;
    for (int k : { 1, 3, 5, 10 }) {
        if (k > r.kernels.size())
            break;
        out << "  top-" << k << " " << QString::number(r.projected(k), 'f', 3) << "x";
        any = true;
    }
    if (!any || r.device.bandwidthGBs <= 0)
        out << "  (no roof known for " << r.device.name << ": CPU runs claim no speedup)";
    out << Qt::endl;
}

void addProfileOptions(QCommandLineParser &p)
{
    p.setApplicationDescription(
        QStringLiteral("Profile a PyTorch model and rank its kernels by Amdahl's law."));
    p.addHelpOption();
    p.addOptions({
        { QStringLiteral("model"),
            QStringLiteral("bundled example (gpt2, llama, bert, cnn) or a .py with get_model()/get_inputs()"),
            QStringLiteral("MODEL") },
        { QStringLiteral("out"),
            QStringLiteral("run directory to create (left unchanged if profiling fails)"),
            QStringLiteral("RUN_DIR") },
        { QStringLiteral("device"), QStringLiteral("cuda or cpu (default: cuda when available)"),
            QStringLiteral("DEVICE") },
        { QStringLiteral("dtype"),
            QStringLiteral(
                "bf16, fp16 or fp32 (default: the model's get_dtype(), else bf16 on GPU, fp32 on CPU)"),
            QStringLiteral("DTYPE") },
        { QStringLiteral("python"), QStringLiteral("Python interpreter with torch (default: auto-detect)"),
            QStringLiteral("PY") },
        { QStringLiteral("timeout"), QStringLiteral("seconds before profiling is abandoned (default 600)"),
            QStringLiteral("SEC"), QStringLiteral("600") },
        { QStringLiteral("iterations"), QStringLiteral("profiled iterations (default 3)"),
            QStringLiteral("N"), QStringLiteral("3") },
        { QStringLiteral("warmup"), QStringLiteral("untimed warm-up iterations (default 2)"),
            QStringLiteral("N"), QStringLiteral("2") },
        { QStringLiteral("top"), QStringLiteral("kernel folders to create, largest share first (default 10)"),
            QStringLiteral("N"), QStringLiteral("10") },
        { QStringLiteral("allow-reduced-precision"),
            QStringLiteral(
                "keep kernels that accumulate in fp16/bf16 or read fp32 as TF32 where PyTorch does "
                "not (flagged; refused by default): run.json settings.allow_reduced_precision") },
    });
}

// Checks the parsed options in the order the user reads them and fills o; returns 0, or the usage
// error's exit code after saying which option is wrong.
int readProfileOptions(const QCommandLineParser &p, RunCreator::Options &o)
{
    const QString model = p.value(QStringLiteral("model"));
    const QString outDir = p.value(QStringLiteral("out"));
    if (model.isEmpty() || outDir.isEmpty())
        return printUsageError(QStringLiteral("profile needs --model MODEL and --out RUN_DIR"));
    const QString device = p.value(QStringLiteral("device")).toLower();
    if (!device.isEmpty() && device != QLatin1String("cuda") && device != QLatin1String("cpu"))
        return printUsageError(QStringLiteral("--device must be cuda or cpu, not '%1'").arg(device));
    const QString dtype = p.value(QStringLiteral("dtype")).toLower();
    if (!dtype.isEmpty() && dtype != QLatin1String("bf16") && dtype != QLatin1String("fp16")
        && dtype != QLatin1String("fp32"))
        return printUsageError(QStringLiteral("--dtype must be bf16, fp16 or fp32, not '%1'").arg(dtype));
    bool ok = false;
    const int timeout = p.value(QStringLiteral("timeout")).toInt(&ok);
    if (!ok || timeout <= 0)
        return printUsageError(QStringLiteral("--timeout must be a positive number of seconds"));
    const int iterations = p.value(QStringLiteral("iterations")).toInt(&ok);
    if (!ok || iterations <= 0)
        return printUsageError(QStringLiteral("--iterations must be a positive number"));
    const int warmup = p.value(QStringLiteral("warmup")).toInt(&ok);
    if (!ok || warmup < 0)
        return printUsageError(QStringLiteral("--warmup must be 0 or more"));
    const int top = p.value(QStringLiteral("top")).toInt(&ok);
    if (!ok || top < 0)
        return printUsageError(QStringLiteral("--top must be 0 or more"));
    o.model = model;
    o.outDir = outDir;
    o.device = device;
    o.dtype = dtype;
    o.python = p.value(QStringLiteral("python"));
    o.timeoutMs = timeout * 1000;
    o.iterations = iterations;
    o.warmup = warmup;
    o.top = top;
    o.allowReducedPrecision = p.isSet(QStringLiteral("allow-reduced-precision"));
    return 0;
}

// Says why the run was not created; returns the exit code (0: it was).
int reportProfileFailure(QTextStream &err, const RunCreator::Result &result, const QString &outDir)
{
    switch (result.failure) {
    case RunCreator::Failure::None:
        return 0;
    case RunCreator::Failure::RunExists:
        err << "autokernel-cli: " << outDir << " already holds a run (run.json exists); choose another --out"
            << Qt::endl;
        return 2;
    case RunCreator::Failure::NoPython:
        err << "autokernel-cli: no usable Python: " << result.error << Qt::endl;
        return 2;
    case RunCreator::Failure::ProfileFailed:
    case RunCreator::Failure::Cancelled:
        err << "autokernel-cli: profiling failed: " << result.error << Qt::endl;
        if (!result.traceback.trimmed().isEmpty())
            err << result.traceback.trimmed() << Qt::endl;
        err << "(nothing was written to " << outDir << ")" << Qt::endl;
        return 1;
    case RunCreator::Failure::CannotCreateRun:
        err << "autokernel-cli: cannot create the run in " << outDir << ": " << result.error << Qt::endl;
        return 2;
    case RunCreator::Failure::CannotWriteProfile:
        err << "autokernel-cli: cannot write profile.json: " << result.error << Qt::endl;
        return 2;
    }
    return 0;
}

} // namespace

int runProfile(const QStringList &arguments)
{
    QCommandLineParser p;
    addProfileOptions(p);
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli profile") } + arguments))
        return printUsageError(p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    RunCreator::Options o;
    if (const int usageError = readProfileOptions(p, o))
        return usageError;
    QTextStream err(stderr);
    RunCreator::Callbacks callbacks;
    callbacks.deviceResolved
        = [&err](const DeviceInfo &dev) { err << "device: " << dev.summary() << Qt::endl; };
    callbacks.progress = [&err](const QString &message, double) { err << "  " << message << Qt::endl; };
    RunCreator creator(o);
    const RunCreator::Result result = creator.create(callbacks);
    if (const int failed = reportProfileFailure(err, result, o.outDir))
        return failed;
    printTable(result.report, 20);
    QTextStream out(stdout);
    out << "\nrun directory " << QFileInfo(o.outDir).absoluteFilePath() << ": profile.json, "
        << result.kernelFolders << " kernel folder(s)" << Qt::endl;
    for (const QString &n : result.notes)
        err << "note: " << n << Qt::endl;
    return 0;
}

} // namespace ak::cli
