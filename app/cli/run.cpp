// autokernel-cli run RUN_DIR: the optimisation loop, headless. Progress goes to stderr as a live line
// (one line per experiment when stderr is not a terminal); a summary table follows on stdout.
//
// runRun reads as the command's steps: the flags into LoopOptions, the workers (a Slurm allocation),
// the agent, the loop run to its end, the report. A step that can end the command returns the exit
// code to end it with (std::optional<int>: empty goes on), so each step prints its own error.
#include "clicommand.h"

#include "agentflags.h"
#include "deviceinfo.h"

#include "loop/modelverifier.h"

#include "llm/llmpricing.h"
#include "loop/localloop.h"
#include "loop/loopsession.h"
#include "loop/orchestrator.h"
#include "loop/slurmallocation.h"
#include "loopinfo.h"
#include "runloader.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QRegularExpression>
#include <QTextStream>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <csignal>
#include <optional>
#include <unistd.h>

namespace ak::cli {

void printRunSummary(const RunSnapshot &run, int maxKernels); // runsummary.cpp

namespace {

std::atomic<int> g_signals { 0 };

extern "C" void onSignal(int)
{
    g_signals.fetch_add(1);
}

// "90", "90s", "10m", "2h", "1h30m" -> seconds; -1 when malformed.
double parseDuration(const QString &text)
{
    static const QRegularExpression part(QStringLiteral("(\\d+(?:\\.\\d+)?)([hms]?)"));
    const QString t = text.trimmed().toLower();
    double seconds = 0;
    int pos = 0;
    while (pos < t.size()) {
        const QRegularExpressionMatch m = part.match(
            t, pos, QRegularExpression::NormalMatch, QRegularExpression::AnchorAtOffsetMatchOption);
        if (!m.hasMatch() || m.capturedLength() == 0)
            return -1;
        const double v = m.captured(1).toDouble();
        const QString unit = m.captured(2);
        seconds += unit == QLatin1String("h") ? v * 3600 : unit == QLatin1String("m") ? v * 60 : v;
        pos += int(m.capturedLength());
    }
    return t.isEmpty() ? -1 : seconds;
}

// Every flag of `run` with its help text; applyAgentFlags reads the llm and command ones by these names.
void addRunFlags(QCommandLineParser &p)
{
    p.setApplicationDescription(
        QStringLiteral("Run the optimisation loop on a run directory until every kernel is done, "
                       "the budget is spent or you press Ctrl-C (the experiment in flight is "
                       "recorded as interrupted; run again to resume)."));
    p.addHelpOption();
    p.addPositionalArgument(
        QStringLiteral("RUN_DIR"), QStringLiteral("run directory made by 'autokernel-cli profile'"));
    p.addOptions({
        { QStringLiteral("agent"),
            QStringLiteral(
                "tune (default offline), llm, command or replay; default: run.json's agent, else tune"),
            QStringLiteral("KIND") },
        { QStringLiteral("budget"), QStringLiteral("stop after this long, e.g. 90s, 10m, 2h, 1h30m"),
            QStringLiteral("TIME") },
        { QStringLiteral("kernels"), QStringLiteral("work on the first N kernels in Amdahl order only"),
            QStringLiteral("N") },
        { QStringLiteral("experiments"), QStringLiteral("stop after N experiments"), QStringLiteral("N") },
        { QStringLiteral("device"),
            QStringLiteral("cpu, cuda or cuda:N; a comma list runs one loop per device (cuda:0,cuda:1)"),
            QStringLiteral("DEV") },
        { QStringLiteral("python"),
            QStringLiteral("Python interpreter with torch (default: the run's, else auto-detect)"),
            QStringLiteral("PY") },
        { QStringLiteral("launcher"),
            QStringLiteral("start each device's worker through this command, e.g. 'ssh gpu1' or 'srun "
                           "--gpus=1 --ntasks=1' (--python then names the interpreter there; kept in "
                           "run.json for a resume; 'local' goes back to local workers; docs/remote.md)"),
            QStringLiteral("CMD") },
        { QStringLiteral("slurm"),
            QStringLiteral("take one Slurm allocation with these salloc arguments (e.g. '--partition=gpu "
                           "--gpus=2 --time=8:00:00') and run each device's worker as an srun step in "
                           "it; the job ends with the loop (kept in run.json for a resume)"),
            QStringLiteral("ARGS") },
        { QStringLiteral("quick"), QStringLiteral("the harness's quick mode: fewer sizes and repetitions") },
        { QStringLiteral("allow-reduced-precision"),
            QStringLiteral(
                "keep kernels that accumulate in fp16/bf16 or read fp32 as TF32 where PyTorch does "
                "not (flagged; refused by default); written to run.json for later resumes") },
        { QStringLiteral("bench-timeout"), QStringLiteral("seconds one benchmark may take (default 180)"),
            QStringLiteral("SEC") },
        { QStringLiteral("in-model-checks"),
            QStringLiteral(
                "check each keep inside the model (kernel alone vs eager) while these checks "
                "take at most PCT % of the loop's time (default 10; 0: off; docs/model-speedup.md)"),
            QStringLiteral("PCT") },
        { QStringLiteral("seed"), QStringLiteral("tune agent: random seed"), QStringLiteral("N") },
        { QStringLiteral("protocol"), QStringLiteral("llm agent: openai or anthropic"), QStringLiteral("P") },
        { QStringLiteral("base-url"),
            QStringLiteral("llm agent: server base URL (vLLM, Ollama, llama.cpp, LM Studio, ...)"),
            QStringLiteral("URL") },
        { QStringLiteral("model"), QStringLiteral("llm agent: model name"), QStringLiteral("NAME") },
        { QStringLiteral("context-tokens"),
            QStringLiteral(
                "llm agent: the model's context in tokens, when the server does not say it or says "
                "wrong (default: asked from the server, else a table of hosted models)"),
            QStringLiteral("N") },
        { QStringLiteral("max-tokens"),
            QStringLiteral("llm agent: the most tokens one reply may take (default 16384; each request "
                           "still caps it at the model's output limit and the room its context leaves)"),
            QStringLiteral("N") },
        { QStringLiteral("api-key-env"),
            QStringLiteral("llm agent: environment variable holding the API key"), QStringLiteral("VAR") },
        { QStringLiteral("prices"),
            QStringLiteral(
                "llm agent: USD per million tokens, a JSON file or text {\"MODEL\": {\"input\": N, "
                "\"output\": N}}: each experiment's cost, and the run's per kept kernel and point"),
            QStringLiteral("FILE_OR_JSON") },
        { QStringLiteral("command"),
            QStringLiteral("command agent: template, e.g. 'mytool --prompt-file {prompt} --workdir {dir}'"),
            QStringLiteral("TEMPLATE") },
        { QStringLiteral("replay"),
            QStringLiteral("replay agent: run directory whose proposals are replayed"),
            QStringLiteral("RUN_DIR") },
        { QStringLiteral("verify-at-end"),
            QStringLiteral(
                "when the loop ends, verify the kept kernels inside the model (autokernel-cli verify)") },
    });
}

// --prices: the user's price table (#43 item 6), never written to the run; a bad one names its cause.
std::optional<int> readPrices(const QCommandLineParser &p, PriceTable *out)
{
    if (!p.isSet(QStringLiteral("prices")))
        return std::nullopt;
    const QString value = p.value(QStringLiteral("prices"));
    QByteArray text = value.toUtf8();
    if (!value.trimmed().startsWith(QLatin1Char('{'))) {
        QFile f(value);
        if (!f.open(QIODevice::ReadOnly))
            return printUsageError(
                QStringLiteral("--prices: cannot read %1: %2").arg(value, f.errorString()));
        text = f.readAll();
    }
    QString why;
    if (!PriceTable::fromJson(text, out, &why))
        return printUsageError(QStringLiteral("--prices: ") + why);
    return std::nullopt;
}

// The loop's limits, devices and worker flags into `o`, checked in the order the errors have always
// come; the agent's flags are readAgentFlags's.
std::optional<int> readLoopFlags(const QCommandLineParser &p, LoopOptions *o)
{
    auto positive = [&p](const char *name, int *out) {
        if (!p.isSet(QLatin1String(name)))
            return true;
        bool ok = false;
        *out = p.value(QLatin1String(name)).toInt(&ok);
        return ok && *out > 0;
    };
    if (!positive("kernels", &o->maxKernels))
        return printUsageError(QStringLiteral("--kernels must be a positive number"));
    if (!positive("experiments", &o->maxExperiments))
        return printUsageError(QStringLiteral("--experiments must be a positive number"));
    if (!positive("bench-timeout", &o->benchTimeLimitSec))
        return printUsageError(QStringLiteral("--bench-timeout must be a positive number of seconds"));
    if (p.isSet(QStringLiteral("in-model-checks"))) {
        bool ok = false;
        o->inModelBudgetPct = p.value(QStringLiteral("in-model-checks")).toDouble(&ok);
        if (!ok || o->inModelBudgetPct < 0 || o->inModelBudgetPct > 100)
            return printUsageError(
                QStringLiteral("--in-model-checks must be a percentage in [0, 100], not '%1'")
                    .arg(p.value(QStringLiteral("in-model-checks"))));
    }
    if (p.isSet(QStringLiteral("budget"))) {
        o->budgetSeconds = parseDuration(p.value(QStringLiteral("budget")));
        if (o->budgetSeconds <= 0)
            return printUsageError(
                QStringLiteral("--budget must be a duration such as 90s, 10m, 2h or 1h30m, not '%1'")
                    .arg(p.value(QStringLiteral("budget"))));
    }
    if (p.isSet(QStringLiteral("device"))) {
        for (const QString &dev :
            p.value(QStringLiteral("device")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            if (!DeviceInfo::isDeviceName(dev.trimmed()))
                return printUsageError(QStringLiteral("--device: '%1' is not cpu, cuda or cuda:N").arg(dev));
            o->devices << dev.trimmed();
        }
    }
    o->python = p.value(QStringLiteral("python"));
    if (p.isSet(QStringLiteral("launcher"))) {
        o->setLauncher = true;
        o->launcher = p.value(QStringLiteral("launcher")).trimmed();
        if (o->launcher == QLatin1String("local"))
            o->launcher.clear();
    }
    if (p.isSet(QStringLiteral("launcher")) && p.isSet(QStringLiteral("slurm")))
        return printUsageError(
            QStringLiteral("--launcher and --slurm: give one (--slurm makes its own launcher)"));
    o->quickBench = p.isSet(QStringLiteral("quick"));
    o->allowReducedPrecision = p.isSet(QStringLiteral("allow-reduced-precision"));
    return readPrices(p, &o->agentInputs.prices);
}

// The workers: with --slurm (or run.json's, unless --launcher replaces it) one allocation whose srun
// steps launch each device's worker. `slurm` is the caller's so the job ends (scancel) when the
// command does, and a second Ctrl-C can end it first.
std::optional<int> takeSlurm(
    const QCommandLineParser &p, const RunSnapshot &run, SlurmAllocation *slurm, LoopOptions *o)
{
    const QString slurmArgs = p.isSet(QStringLiteral("slurm"))
        ? p.value(QStringLiteral("slurm")).trimmed()
        : (p.isSet(QStringLiteral("launcher")) ? QString() : run.config.workerSlurm);
    if (slurmArgs.isEmpty())
        return std::nullopt;
    QTextStream(stderr) << "slurm: asking for an allocation: salloc --no-shell " << slurmArgs << Qt::endl;
    QString error;
    if (!slurm->allocate(slurmArgs, &error)) {
        QTextStream(stderr) << "autokernel-cli: slurm: " << error << Qt::endl;
        return 2;
    }
    QTextStream(stderr) << "slurm: job " << slurm->jobId() << " granted; one srun step per device"
                        << Qt::endl;
    const bool gpu = o->devices.isEmpty()
        ? run.config.device.available && run.config.device.vendor != QLatin1String("cpu")
        : o->devices.first().startsWith(QLatin1String("cuda"));
    o->setLauncher = true;
    o->launcher = slurm->launcher(gpu);
    o->slurm = slurmArgs;
    o->slurmJob = slurm->jobId();
    return std::nullopt;
}

// The agent: run.json's configuration, with this command line's choices on top.
std::optional<int> readAgentFlags(const QCommandLineParser &p, const RunSnapshot &run, AgentConfig *agent)
{
    QString error;
    if (!agentOfRun(run, agent, &error))
        return printUsageError(error);
    if (p.isSet(QStringLiteral("agent"))
        && !AgentConfig::parseKind(p.value(QStringLiteral("agent")), &agent->kind))
        return printUsageError(QStringLiteral("--agent must be one of %1")
                                   .arg(AgentConfig::kindNames().join(QStringLiteral(", "))));
    applyAgentFlags(p, agent);
    if (p.isSet(QStringLiteral("seed")))
        agent->seed = p.value(QStringLiteral("seed")).toInt();
    if (p.isSet(QStringLiteral("context-tokens"))) {
        bool ok = false;
        agent->contextTokens = p.value(QStringLiteral("context-tokens")).toInt(&ok);
        if (!ok || agent->contextTokens < 1)
            return printUsageError(QStringLiteral("--context-tokens must be a positive number of tokens"));
    }
    // Without it the output limit could only be changed by editing run.json (a model whose limit the
    // table does not know, a server that refuses 16384).
    if (p.isSet(QStringLiteral("max-tokens"))) {
        bool ok = false;
        agent->maxTokens = p.value(QStringLiteral("max-tokens")).toInt(&ok);
        if (!ok || agent->maxTokens < 1)
            return printUsageError(QStringLiteral("--max-tokens must be a positive number of tokens"));
    }
    return std::nullopt;
}

// What the loop's signals write to while it runs. It lives in runRun, as long as the loop, because
// the connections below hold references to it until the loop is gone.
struct LoopConsole
{
    QTextStream err { stderr };
    bool tty = isatty(STDERR_FILENO) == 1;
    bool liveLineShown = false; // an experiment line without its newline is on the terminal
    int exitCode = 0; // 2 once the loop reports an action it could not take
};

void showProgress(LocalLoop &loop, LoopConsole &console)
{
    QObject::connect(&loop, &LocalLoop::message, [&console](const QString &line) {
        // Experiment lines replace the live line on a terminal; everything else is a log line above it.
        const bool experimentLine = line.contains(QLatin1String("] #"));
        if (console.tty && experimentLine) {
            console.err << "\r\x1b[K" << line.left(200) << Qt::flush;
            console.liveLineShown = true;
            return;
        }
        if (console.tty && console.liveLineShown)
            console.err << "\r\x1b[K";
        console.err << line << Qt::endl;
        console.liveLineShown = false;
    });
    QObject::connect(&loop, &LocalLoop::actionFailed, [&console](const QString &action, const QString &why) {
        console.err << "autokernel-cli: " << action << ": " << why << Qt::endl;
        console.exitCode = 2;
        QCoreApplication::exit(0);
    });
    QObject::connect(&loop, &LocalLoop::finished, [](const QString &) { QCoreApplication::exit(0); });
}

// Ctrl-C (or SIGTERM) stops the loop gently; a second one leaves at once. The handler only counts:
// `poll` acts on the count from the event loop, where stopping the loop is safe.
void watchSignals(QTimer &poll, LocalLoop &loop, SlurmAllocation &slurm, QTextStream &err)
{
    g_signals.store(0);
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    poll.setInterval(100);
    QObject::connect(&poll, &QTimer::timeout, [&] {
        if (g_signals.load() > 0 && loop.state() != LoopControl::State::Stopping
            && loop.state() != LoopControl::State::Stopped) {
            err << "\nstopping: the experiment in flight is recorded as interrupted (Ctrl-C again to force)"
                << Qt::endl;
            loop.stop();
        }
        if (g_signals.load() > 1) {
            slurm.release(); // an allocation taken with --no-shell would outlive us until its time limit
            std::_Exit(130);
        } // the run stays consistent: the next open repairs the interrupted experiment
    });
    poll.start();
}

// Names the agent on stderr and, for a window watching the run, writes the budget left and the agent
// of this loop (LoopInfo).
void announceLoop(const LoopOptions &o, QTextStream &err)
{
    err << "run " << o.runDir << ": "
        << (o.agent.kind == AgentConfig::Kind::Tune
                   ? QStringLiteral("tune agent (offline)")
                   : AgentConfig::kindName(o.agent.kind) + QStringLiteral(" agent"))
        << Qt::endl;
    LoopInfo info;
    info.pid = QCoreApplication::applicationPid();
    info.started = QDateTime::currentDateTimeUtc();
    if (o.budgetSeconds > 0)
        info.deadline = info.started.addMSecs(qint64(o.budgetSeconds * 1000));
    info.maxExperiments = o.maxExperiments;
    info.agent = AgentConfig::kindName(o.agent.kind);
    if (o.agent.kind == AgentConfig::Kind::Llm && !o.agent.model.isEmpty())
        info.agent += QStringLiteral(" (%1)").arg(o.agent.model);
    info.write(o.runDir, nullptr); // best effort: the loop runs either way
}

// The loop from start to end inside this thread's event loop; 0, or 2 when an action failed.
int runLoop(
    LocalLoop &loop, const LoopOptions &o, LoopConsole &console, QTimer &signalPoll, SlurmAllocation &slurm)
{
    showProgress(loop, console);
    watchSignals(signalPoll, loop, slurm, console.err);
    announceLoop(o, console.err);
    QTimer::singleShot(0, &loop, [&loop] { loop.start(); });
    QCoreApplication::exec();
    LoopInfo::remove(o.runDir);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    return console.exitCode;
}

// --verify-at-end: the kept kernels inside the model, as `autokernel-cli verify` would; empty when
// verified, else verify's exit code (2 for the environment, 1 for a failed verification).
std::optional<int> verifyKeptKernels(const LoopOptions &o, QTextStream &err)
{
    VerifyOptions vo;
    vo.runDir = o.runDir;
    vo.python = o.python;
    if (!o.devices.isEmpty())
        vo.device = o.devices.first().section(QLatin1Char(':'), 0, 0);
    err << "verifying the kept kernels inside the model" << Qt::endl;
    const VerifyOutcome v
        = ModelVerifier::verify(vo, [&err](const QString &m, double) { err << "verify: " << m << Qt::endl; });
    if (!v.ok) {
        err << "autokernel-cli: verify: " << v.error << Qt::endl;
        return v.environmentError ? 2 : 1;
    }
    QTextStream(stdout) << QStringLiteral(
        "measured model speedup: %1x (eager + %2 kernel(s) vs eager); verification.json %3\n")
                               .arg(v.verification.value("model_speedup", 0.0), 0, 'f', 3)
                               .arg(v.verification.value("final_set", nlohmann::json::array()).size())
                               .arg(v.recorded);
    return std::nullopt;
}

// Why the loop ended, the run's summary table and the loop's rates; then --verify-at-end, skipped
// after a Ctrl-C. 1 when the loop ended on a failure, else 0.
int reportLoop(const QCommandLineParser &p, LocalLoop &loop, const LoopOptions &o, LoopConsole &console)
{
    loop.wait();
    if (console.tty && console.liveLineShown)
        console.err << Qt::endl;

    const LoopStats stats = loop.stats();
    console.err << "ended: " << loop.endReason() << Qt::endl;
    QString error;
    const RunSnapshotPtr after = RunLoader::load(o.runDir, &error);
    if (after)
        printRunSummary(*after, o.maxKernels);
    QTextStream(stdout) << QStringLiteral(
        "\n%1 experiments (%2 kept, %3 failed) in %4 s, %5 experiments/hour; "
        "loop overhead %6 ms per experiment (mean)\n")
                               .arg(stats.experiments)
                               .arg(stats.kept)
                               .arg(stats.failed)
                               .arg(stats.elapsedSeconds, 0, 'f', 1)
                               .arg(stats.perHour(), 0, 'f', 0)
                               .arg(stats.experiments > 0 ? stats.overheadMsTotal / stats.experiments : 0.0,
                                   0, 'f', 1);
    if (p.isSet(QStringLiteral("verify-at-end")) && g_signals.load() == 0) {
        if (const std::optional<int> failed = verifyKeptKernels(o, console.err))
            return *failed;
    }
    return loop.endedWithFailure() ? 1 : 0;
}

} // namespace

int runRun(const QStringList &arguments)
{
    QCommandLineParser p;
    addRunFlags(p);
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli run") } + arguments))
        return printUsageError(p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    if (p.positionalArguments().size() != 1)
        return printUsageError(QStringLiteral("run: give one run directory"));

    LoopOptions o;
    o.runDir = p.positionalArguments().first();
    QString error;
    const RunSnapshotPtr run = RunLoader::load(o.runDir, &error);
    if (!run)
        return printUsageError(error);
    if (const std::optional<int> stop = readLoopFlags(p, &o))
        return *stop;
    // Declared here so the allocation ends (scancel) whichever way this returns.
    SlurmAllocation slurm;
    if (const std::optional<int> stop = takeSlurm(p, *run, &slurm, &o))
        return *stop;
    if (const std::optional<int> stop = readAgentFlags(p, *run, &o.agent))
        return *stop;
    o.overrideAgent = true;

    // The loop's connections refer to these three, so they live until this returns.
    LoopConsole console;
    LocalLoop loop(o);
    QTimer signalPoll;
    if (const int failed = runLoop(loop, o, console, signalPoll, slurm))
        return failed;
    return reportLoop(p, loop, o, console);
}

} // namespace ak::cli
