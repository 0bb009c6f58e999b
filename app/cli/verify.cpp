// autokernel-cli verify RUN_DIR [--device cpu|cuda] [--kernels K,...] [--seeds N] [--no-compile]
// [--mode eager|compile] [--allow-changed-model] [--python PY] [--timeout SEC] [--json]: the run's
// kept kernels back in the model at their call sites; parity, the four timings, the final set chosen
// in the mode (eager, or under torch.compile); verification.json in the run.
#include "clicommand.h"

#include "jsonfield.h"
#include "loop/modelverifier.h"
#include "runloader.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTextStream>

namespace ak::cli {

namespace {

QString num(const nlohmann::json &o, const char *key, int precision = 3, const QString &suffix = QString())
{
    const std::optional<double> v = jsonfield::strict::number(o, key);
    return v ? QString::number(*v, 'f', precision) + suffix : QStringLiteral("-");
}

// What the kernel saves per forward in `mode` (verify's leave-one-out there), "-" where not measured.
QString saved(const nlohmann::json &k, const char *mode)
{
    const auto versus = k.find("versus");
    if (versus == k.end() || !versus->is_object() || !versus->contains(mode) || !(*versus)[mode].is_object())
        return QStringLiteral("-");
    return num((*versus)[mode], "saved_us", 1, QStringLiteral(" us"));
}

// Item 4 of #40: the kernels whose sites inductor's own code runs faster than ours.
void printCompileWins(QTextStream &out, const nlohmann::json &v)
{
    QStringList wins;
    for (const auto &k : v.value("kernels", nlohmann::json::array())) {
        const nlohmann::json versus = k.value("versus", nlohmann::json::object());
        if (versus.is_object() && versus.value("compile_wins", false))
            wins << QStringLiteral("%1 (%2)").arg(
                QString::fromStdString(k.value("kernel", "")), saved(k, "compile"));
    }
    if (!wins.isEmpty())
        out << "torch.compile's own code is faster at the sites of: " << wins.join(QStringLiteral(", "))
            << '\n';
}

void printSummary(const nlohmann::json &v, const QString &recorded)
{
    QTextStream out(stdout);
    const QString mode = QString::fromStdString(v.value("mode", std::string("eager")));
    out << "mode " << mode
        << (mode == QLatin1String("compile") ? ": the final set chosen under torch.compile\n"
                                             : ": the final set chosen in eager mode\n");
    out << QStringLiteral("%1  %2  %3  %4  %5  %6  %7\n")
               .arg(QStringLiteral("kernel"), -22)
               .arg(QStringLiteral("op"), -16)
               .arg(QStringLiteral("parity"), -8)
               .arg(QStringLiteral("effect"), 8)
               .arg(QStringLiteral("saved eager"), 12)
               .arg(QStringLiteral("saved compile"), 13)
               .arg(QStringLiteral("final"));
    for (const auto &k : v.value("kernels", nlohmann::json::array())) {
        const bool final = k.value("in_final_set", false);
        const auto parity = k.find("parity");
        const QString par = parity == k.end()
            ? QStringLiteral("-")
            : (parity->value("ok", false) ? QStringLiteral("ok") : QStringLiteral("FAIL"));
        out << QStringLiteral("%1  %2  %3  %4  %5  %6  %7")
                   .arg(QString::fromStdString(k.value("kernel", "")), -22)
                   .arg(QString::fromStdString(k.value("op_type", "")), -16)
                   .arg(par, -8)
                   .arg(num(k, "effect_pct", 2, QStringLiteral("%")), 8)
                   .arg(saved(k, "eager"), 12)
                   .arg(saved(k, "compile"), 13)
                   .arg(final ? QStringLiteral("yes") : QStringLiteral("no"));
        if (!final && k.contains("why_not"))
            out << "  — " << QString::fromStdString(k["why_not"].get<std::string>()).left(150);
        out << '\n';
        // The cold re-check's distribution (#43): what "offered" rests on, not only its verdict.
        if (const auto re = k.find("recheck"); re != k.end() && re->is_object() && re->value("pairs", 0) > 0)
            out << QStringLiteral(
                "    cold re-check vs PyTorch: 10th percentile %1, median %2, 90th %3 over %4 "
                "paired rounds: %5\n")
                       .arg(num(*re, "p10", 3, QStringLiteral("x")),
                           num(*re, "median", 3, QStringLiteral("x")),
                           num(*re, "p90", 3, QStringLiteral("x")))
                       .arg(re->value("pairs", 0))
                       .arg(re->value("offered", false) ? QStringLiteral("offered")
                                                        : QStringLiteral("withheld"));
    }
    out << '\n';
    const nlohmann::json t = v.value("timings", nlohmann::json::object());
    for (const char *key : { "eager", "eager+ours", "compile", "compile+ours" }) {
        if (t.contains(key) && t[key].is_object())
            out << QStringLiteral("%1 %2 us per forward  %3x vs eager\n")
                       .arg(QString::fromLatin1(key), -14)
                       .arg(num(t[key], "median_us", 1), 12)
                       .arg(num(t[key], "speedup_vs_eager", 3));
        else if (t.contains(std::string(key) + "_error"))
            out << QStringLiteral("%1 not measured: %2\n")
                       .arg(QString::fromLatin1(key), -14)
                       .arg(QString::fromStdString(t[std::string(key) + "_error"].get<std::string>()));
    }
    if (t.contains("compile+ours") && t["compile+ours"].contains("speedup_vs_compile"))
        out << QStringLiteral("compile+ours vs compile: %1x\n")
                   .arg(num(t["compile+ours"], "speedup_vs_compile", 3));
    printCompileWins(out, v);
    if (t.contains("compile_advice") && t["compile_advice"].is_string())
        out << QString::fromStdString(t["compile_advice"].get<std::string>()) << '\n';
    for (const auto &step : v.value("selection", nlohmann::json::array()))
        out << "selection: " << QString::fromStdString(step.get<std::string>()) << '\n';
    const nlohmann::json p = v.value("parity", nlohmann::json::object());
    out << "\nparity of the final set: " << (p.value("ok", false) ? "ok" : "FAILED") << " (worst "
        << num(p, "error") << " tolerances from the truth, eager " << num(p, "eager_error") << ")\n"
        << "measured model speedup: " << num(v, "model_speedup") << "x (eager + the final set vs eager)\n";
    if (mode == QLatin1String("compile"))
        out << "measured speedup under compile: " << num(v, "mode_speedup")
            << "x (compile + the final set vs compile alone)\n";
    out << "verification.json " << recorded << '\n';
}

// #38's target: of the harness wins (kernels the loop kept a change in that beat PyTorch in the
// harness), those that saved time inside the model in this verification (the one just made: verification.json
// may not hold it yet when a loop writes the run and records it at its next experiment).
void printKeptInModel(const QString &runDir, const nlohmann::json &verification)
{
    const RunSnapshotPtr run = RunLoader::load(runDir);
    QStringList warnings;
    const std::optional<ModelVerification> v = ModelVerification::parse(
        QByteArray::fromStdString(verification.dump()), QStringLiteral("verification.json"), &warnings);
    if (!run || !v)
        return;
    const RunSnapshot::KeptInModel k = run->keptInModel(*v);
    QTextStream out(stdout);
    if (!k.slower.isEmpty())
        out << "kept a change but still slower than PyTorch in the harness (not offered, no harness win): "
            << k.slower.join(QStringLiteral(", ")) << '\n';
    if (k.kept.isEmpty())
        return;
    QStringList rest;
    for (const QString &name : k.kept)
        if (!k.gains.contains(name))
            rest << name;
    out << QStringLiteral("harness wins in the model: %1 of %2 kernels the loop kept a change in that beat "
                          "PyTorch in the harness save time there (%3 %)")
               .arg(k.gains.size())
               .arg(k.kept.size())
               .arg(100.0 * k.gains.size() / k.kept.size(), 0, 'f', 0);
    if (!k.gains.isEmpty())
        out << ": " << k.gains.join(QStringLiteral(", "));
    if (!rest.isEmpty())
        out << "; not: " << rest.join(QStringLiteral(", "));
    out << '\n';
}

} // namespace

int runVerify(const QStringList &args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN_DIR"), QStringLiteral("the run directory"));
    p.addOptions({
        { QStringLiteral("device"),
            QStringLiteral("cpu or cuda (default: the device the run was profiled on)"),
            QStringLiteral("DEV") },
        { QStringLiteral("kernels"), QStringLiteral("only these kernel folders (comma-separated)"),
            QStringLiteral("K,...") },
        { QStringLiteral("seeds"), QStringLiteral("fresh input draws compared (default 3)"),
            QStringLiteral("N") },
        { QStringLiteral("rounds"), QStringLiteral("alternating timing rounds per comparison (default 7)"),
            QStringLiteral("N") },
        { QStringLiteral("no-compile"),
            QStringLiteral("do not time torch.compile with and without the kernels") },
        { QStringLiteral("mode"),
            QStringLiteral(
                "eager (default): keep the kernels that make the eager model faster; compile: "
                "those that make the torch.compile'd model faster (compiled with and without each)"),
            QStringLiteral("MODE"), QStringLiteral("eager") },
        { QStringLiteral("allow-changed-model"),
            QStringLiteral("verify although the model file changed since profiling") },
        { QStringLiteral("python"), QStringLiteral("Python interpreter with torch (default: the run's)"),
            QStringLiteral("PY") },
        { QStringLiteral("timeout"), QStringLiteral("seconds before giving up (default 3600)"),
            QStringLiteral("SEC") },
        { QStringLiteral("json"), QStringLiteral("print verification.json instead of the summary") },
    });
    p.addHelpOption();
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli verify") } + args))
        return printUsageError(p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    if (p.positionalArguments().size() != 1)
        return printUsageError(QStringLiteral("verify: give one run directory"));
    VerifyOptions o;
    o.runDir = p.positionalArguments().first();
    o.device = p.value(QStringLiteral("device"));
    if (!o.device.isEmpty() && o.device != QLatin1String("cpu") && o.device != QLatin1String("cuda"))
        return printUsageError(QStringLiteral("--device must be cpu or cuda"));
    o.kernels = p.value(QStringLiteral("kernels")).split(QLatin1Char(','), Qt::SkipEmptyParts);
    bool ok = true;
    if (p.isSet(QStringLiteral("seeds"))
        && ((o.seeds = p.value(QStringLiteral("seeds")).toInt(&ok)) < 1 || !ok))
        return printUsageError(QStringLiteral("--seeds must be a positive number"));
    if (p.isSet(QStringLiteral("rounds"))
        && ((o.rounds = p.value(QStringLiteral("rounds")).toInt(&ok)) < 2 || !ok))
        return printUsageError(QStringLiteral("--rounds must be a number of at least 2"));
    if (p.isSet(QStringLiteral("timeout"))
        && ((o.timeoutSec = p.value(QStringLiteral("timeout")).toInt(&ok)) < 1 || !ok))
        return printUsageError(QStringLiteral("--timeout must be a positive number of seconds"));
    o.compile = !p.isSet(QStringLiteral("no-compile"));
    o.mode = p.value(QStringLiteral("mode"));
    if (const QString why = ModelVerifier::modeError(o.mode, QStringLiteral("--mode"), o.compile);
        !why.isEmpty())
        return printUsageError(why);
    o.allowChangedModel = p.isSet(QStringLiteral("allow-changed-model"));
    o.python = p.value(QStringLiteral("python"));

    QTextStream err(stderr);
    QElapsedTimer clock; // each step's start, so a slow step shows itself
    clock.start();
    const VerifyOutcome r = ModelVerifier::verify(o, [&err, &clock](const QString &message, double) {
        err << QStringLiteral("verify [%1 s]: ").arg(clock.elapsed() / 1000.0, 0, 'f', 1) << message
            << Qt::endl;
    });
    if (!r.ok) {
        err << "autokernel-cli: verify: " << r.error << Qt::endl;
        return r.environmentError ? 2 : 1;
    }
    if (p.isSet(QStringLiteral("json")))
        QTextStream(stdout) << QString::fromStdString(r.verification.dump(2)) << '\n';
    else {
        printSummary(r.verification, r.recorded);
        printKeptInModel(o.runDir, r.verification);
    }
    return r.verification.value("parity", nlohmann::json::object()).value("ok", false) ? 0 : 1;
}

} // namespace ak::cli
