// autokernel-cli rules RUN_DIR [--max-consecutive-reverts N] [--roof-pct P] [--hours-per-kernel H]
// [--speedup-over-baseline X] [--json]: prints the run's move-on rules, or changes the ones given.
// Like the steering commands it goes through RunSteering::steer: applied as the run's writer, or, when
// another process holds the lock (the loop is running), queued for it to apply at its next experiment.
#include "clicommand.h"

#include "experimentlog.h"
#include "runloader.h"
#include "runsteering.h"
#include "runstore.h"
#include "steeroutcome.h"

#include <nlohmann/json.hpp>

#include <QTextStream>

namespace ak::cli {

namespace {

struct Flag
{
    const char *option; // "--roof-pct"
    const char *field; // "roof_pct"
    bool integer;
    const char *meaning;
};

const Flag kFlags[] = {
    { "--max-consecutive-reverts", "max_consecutive_reverts", true,
        "move on after N reverts/failures in a row (whole number)" },
    { "--roof-pct", "roof_pct", false, "move on once the kernel's best reaches P % of its roof (0-100)" },
    { "--hours-per-kernel", "hours_per_kernel", false, "move on after H hours of work on the kernel" },
    { "--speedup-over-baseline", "speedup_over_baseline", false,
        "move on once the kernel is X times faster than its baseline (> 1)" },
    { "--max-in-model-misses", "max_in_model_misses", true,
        "move on after N kept harness wins in a row showed no gain in the model (whole number)" },
};

void printUsage()
{
    QTextStream out(stdout);
    out << "Usage: autokernel-cli rules RUN_DIR [--max-consecutive-reverts N] [--roof-pct P]\n"
        << "                              [--hours-per-kernel H] [--speedup-over-baseline X]\n"
        << "                              [--max-in-model-misses N] [--json]\n\n"
        << "Without options: print the run's move-on rules (run.json \"move_on\"). With options: change\n"
        << "those rules (the others stay); the loop uses them from its next experiment. If the loop runs\n"
        << "in another process the change is queued for it. 0 switches a rule off.\n\n";
    for (const Flag &f : kFlags)
        out << "  " << QString::fromLatin1(f.option).leftJustified(26) << f.meaning << '\n';
    out << "  " << QStringLiteral("--json").leftJustified(26) << "print the rules as JSON\n";
}

QString number(double v)
{
    return QString::number(v, 'g', 6);
}

void printRules(const MoveOnRules &r, const RunSnapshot *run, bool asJson)
{
    QTextStream out(stdout);
    if (asJson) {
        out << r.toJson();
        return;
    }
    auto row = [&out](const char *field, const QString &value, double raw) {
        out << "  " << QString::fromLatin1(field).leftJustified(25)
            << (raw == 0 ? value.leftJustified(8) + QStringLiteral("(off)") : value) << '\n';
    };
    out << "Move-on rules (0 switches a rule off):\n";
    row("max_consecutive_reverts", QString::number(r.maxConsecutiveReverts), r.maxConsecutiveReverts);
    row("roof_pct", number(r.roofPct), r.roofPct);
    row("hours_per_kernel", number(r.hoursPerKernel), r.hoursPerKernel);
    row("speedup_over_baseline", number(r.speedupOverBaseline), r.speedupOverBaseline);
    row("max_in_model_misses", QString::number(r.maxInModelMisses), r.maxInModelMisses);
    if (run && !run->moveOnChanges.isEmpty()) {
        const MoveOnChange &c = run->moveOnChanges.constLast();
        out << "Last changed " << ExperimentLog::timeText(c.time) << " by "
            << (c.by.isEmpty() ? QStringLiteral("(unknown)") : c.by) << " (" << run->moveOnChanges.size()
            << (run->moveOnChanges.size() == 1 ? " change" : " changes") << " in experiments.jsonl)\n";
    }
}

// `given` over `current`, checked; the error names the field.
bool merge(const MoveOnRules &current, const nlohmann::json &given, MoveOnRules *out, QString *error)
{
    nlohmann::json merged = nlohmann::json::parse(current.toJson().toStdString());
    merged.update(given);
    return MoveOnRules::fromJson(QByteArray::fromStdString(merged.dump()), out, error);
}

} // namespace

int runRules(const QStringList &argsIn)
{
    QStringList args = argsIn;
    if (args.contains(QStringLiteral("--help")) || args.contains(QStringLiteral("-h"))) {
        printUsage();
        return 0;
    }
    const bool asJson = args.removeAll(QStringLiteral("--json")) > 0;
    nlohmann::json given = nlohmann::json::object();
    QStringList positional;
    for (int i = 0; i < args.size(); ++i) {
        QString arg = args.at(i);
        if (!arg.startsWith(QLatin1String("--"))) {
            positional << arg;
            continue;
        }
        QString value;
        bool hasValue = false;
        if (const int eq = int(arg.indexOf(QLatin1Char('='))); eq > 0) {
            value = arg.mid(eq + 1);
            arg = arg.left(eq);
            hasValue = true;
        }
        const Flag *flag = nullptr;
        for (const Flag &f : kFlags)
            if (arg == QLatin1String(f.option))
                flag = &f;
        if (!flag)
            return printUsageError(QStringLiteral("rules: unknown option '%1'").arg(arg));
        if (!hasValue) {
            if (i + 1 >= args.size())
                return printUsageError(QStringLiteral("rules: %1 needs a value").arg(arg));
            value = args.at(++i);
        }
        bool ok = false;
        if (flag->integer) {
            const qlonglong n = value.toLongLong(&ok);
            if (!ok)
                return printUsageError(QStringLiteral("rules: %1 (%2) must be a whole number, not '%3'")
                                           .arg(arg, QLatin1String(flag->field), value));
            given[flag->field] = n;
        } else {
            const double x = value.toDouble(&ok);
            if (!ok)
                return printUsageError(QStringLiteral("rules: %1 (%2) must be a number, not '%3'")
                                           .arg(arg, QLatin1String(flag->field), value));
            given[flag->field] = x;
        }
    }
    if (positional.size() != 1)
        return printUsageError(
            QStringLiteral("rules: usage: rules RUN_DIR [--max-consecutive-reverts N] [--roof-pct P] "
                           "[--hours-per-kernel H] [--speedup-over-baseline X] [--json]"));
    const QString dir = positional.first();

    QString error;
    const RunSnapshotPtr run = RunLoader::load(dir, &error);
    if (!run)
        return printUsageError(error);
    const MoveOnRules current = run->config.moveOn;
    if (!run->config.moveOnWarning.isEmpty())
        QTextStream(stderr) << "autokernel-cli rules: " << run->config.moveOnWarning
                            << " (the loop uses the defaults)\n";

    if (given.empty()) {
        printRules(current, run.get(), asJson);
        return 0;
    }
    MoveOnRules wanted;
    if (!merge(current, given, &wanted, &error))
        return printUsageError(QStringLiteral("rules: %1").arg(error));

    // The writer merges the given fields over its own current rules (after its repair), which may
    // differ from what was loaded above.
    const RunSteering::Outcome o = RunSteering::steer(dir, SteerRequest::moveOn(given, RunStore::author()));
    const QString queued = QStringLiteral(
        "rules: queued for the writer of the run (pid %1), which applies them at its next experiment")
                               .arg(o.writer);
    if (const int code = reportSteerOutcome(o, QStringLiteral("rules"), queued); code >= 0)
        return code;
    wanted = o.state->config.moveOn;
    if (asJson) {
        printRules(wanted, nullptr, true);
    } else {
        QTextStream(stdout) << "rules: done\n";
        printRules(wanted, o.state.get(), false);
    }
    return 0;
}

} // namespace ak::cli
