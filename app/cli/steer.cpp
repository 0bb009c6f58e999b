// Steering subcommands: pin, unpin, skip, revert, accept, reject, review. Each goes through
// RunSteering::steer: applied as the run's writer, or queued for the process that holds the lock (the
// loop is running).
#include "clicommand.h"

#include "runloader.h"
#include "runsteering.h"
#include "steeroutcome.h"

#include <QTextStream>

namespace ak::cli {

namespace {

struct Steer
{
    SteerRequest::Action action; // its name is the subcommand's
    const char *usage;
    bool kernelArg;
    bool idArg;
};

// Pulls "--reason TEXT" out of args.
QString takeReason(QStringList &args)
{
    const int i = int(args.indexOf(QStringLiteral("--reason")));
    if (i < 0 || i + 1 >= args.size())
        return QString();
    const QString reason = args.at(i + 1);
    args.remove(i, 2);
    return reason;
}

int steer(const Steer &cmd, QStringList args)
{
    const QString command = SteerRequest::actionName(cmd.action);
    if (args.contains(QStringLiteral("--help")) || args.contains(QStringLiteral("-h"))) {
        QTextStream(stdout) << "Usage: autokernel-cli " << command << ' ' << cmd.usage << '\n'
                            << "If the loop is running in another process, the request is queued for it.\n";
        return 0;
    }
    const QString reason = takeReason(args);
    const bool undo = args.removeAll(QStringLiteral("--undo")) > 0;
    const int expected = 1 + (cmd.kernelArg ? 1 : 0) + (cmd.idArg ? 1 : 0);
    if (args.size() != expected)
        return printUsageError(QStringLiteral("%1: usage: %1 %2").arg(command, QLatin1String(cmd.usage)));
    const QString dir = args[0];
    const QString kernel = cmd.kernelArg ? args[1] : QString();
    int id = 0;
    if (cmd.idArg) {
        bool ok = false;
        id = args.last().toInt(&ok);
        if (!ok || id <= 0)
            return printUsageError(QStringLiteral("%1: experiment id must be a positive number, not '%2'")
                                       .arg(command, args.last()));
    }
    SteerRequest::Action action = cmd.action;
    if (undo && action == SteerRequest::Action::Skip)
        action = SteerRequest::Action::Unskip;
    const QString name = SteerRequest::actionName(action);

    const RunSteering::Outcome o
        = RunSteering::steer(dir, SteerRequest::kernelAction(action, kernel, id).withReason(reason));
    if (const int code = reportSteerOutcome(o, name, name + QStringLiteral(": ") + o.message); code >= 0)
        return code;
    const QString done = action == SteerRequest::Action::Revert
        ? QStringLiteral(" (new experiment #%1, commit %2)").arg(o.created.id).arg(o.created.commit.left(12))
        : QString();
    QTextStream(stdout) << name << ": done" << done << '\n';
    return 0;
}

QString pendingText(const RunSnapshot &run)
{
    QStringList ids;
    for (const Experiment &e : run.experiments)
        if (e.status == ExperimentStatus::Pending)
            ids << QString::number(e.id);
    if (ids.isEmpty())
        return QStringLiteral("no experiment waits for review");
    return QStringLiteral("%1 waiting for review (experiment%2 %3; autokernel-cli accept|reject RUN_DIR ID)")
        .arg(ids.size())
        .arg(ids.size() == 1 ? QString() : QStringLiteral("s"), ids.join(QStringLiteral(", ")));
}

QString modeText(bool on)
{
    return on ? QStringLiteral("on (a would-be keep waits as pending until accepted or rejected)")
              : QStringLiteral("off (the loop keeps improvements itself)");
}

} // namespace

// review RUN_DIR [on|off]: shows or switches review mode (RunSteering::steer with SteerRequest::review).
int runReview(const QStringList &argsIn)
{
    const QString usage = QStringLiteral("review RUN_DIR [on|off]");
    QStringList args = argsIn;
    if (args.contains(QStringLiteral("--help")) || args.contains(QStringLiteral("-h"))) {
        QTextStream(stdout)
            << "Usage: autokernel-cli " << usage << "\n"
            << "Without on|off, shows whether the run is in review mode. In review mode a would-be\n"
            << "keep is recorded as pending and waits for `autokernel-cli accept|reject RUN_DIR ID`.\n"
            << "If the loop is running in another process, the switch is queued for it and applies\n"
            << "from its next experiment.\n";
        return 0;
    }
    for (const QString &a : args)
        if (a.startsWith(QLatin1Char('-')))
            return printUsageError(QStringLiteral("review: unknown option '%1'").arg(a));
    if (args.isEmpty() || args.size() > 2)
        return printUsageError(QStringLiteral("review: usage: %1").arg(usage));
    const QString dir = args.first();

    QString error;
    if (args.size() == 1) {
        const RunSnapshotPtr run = RunLoader::load(dir, &error);
        if (!run)
            return printUsageError(error);
        QTextStream(stdout) << "review mode: " << modeText(run->reviewMode) << '\n'
                            << pendingText(*run) << '\n';
        return 0;
    }
    const QString word = args.at(1).toLower();
    if (word != QLatin1String("on") && word != QLatin1String("off"))
        return printUsageError(QStringLiteral("review: expected 'on' or 'off', not '%1'").arg(args.at(1)));
    const bool on = word == QLatin1String("on");

    const RunSteering::Outcome o = RunSteering::steer(dir, SteerRequest::review(on));
    if (const int code = reportSteerOutcome(
            o, QStringLiteral("review"), QStringLiteral("review mode %1: %2").arg(word, o.message));
        code >= 0)
        return code;
    QTextStream(stdout) << "review mode: " << modeText(o.state->reviewMode) << '\n'
                        << pendingText(*o.state) << '\n';
    return 0;
}

int runPin(const QStringList &a)
{
    return steer({ SteerRequest::Action::Pin, "RUN_DIR KERNEL [--reason TEXT]", true, false }, a);
}
int runUnpin(const QStringList &a)
{
    return steer({ SteerRequest::Action::Unpin, "RUN_DIR KERNEL", true, false }, a);
}
int runSkip(const QStringList &a)
{
    return steer({ SteerRequest::Action::Skip, "RUN_DIR KERNEL [--reason TEXT] [--undo]", true, false }, a);
}
int runRevert(const QStringList &a)
{
    return steer({ SteerRequest::Action::Revert, "RUN_DIR KERNEL EXPERIMENT_ID", true, true }, a);
}
int runAccept(const QStringList &a)
{
    return steer({ SteerRequest::Action::Accept, "RUN_DIR EXPERIMENT_ID", false, true }, a);
}
int runReject(const QStringList &a)
{
    return steer({ SteerRequest::Action::Reject, "RUN_DIR EXPERIMENT_ID [--reason TEXT]", false, true }, a);
}

} // namespace ak::cli
