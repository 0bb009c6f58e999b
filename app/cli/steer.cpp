// Steering subcommands: pin, unpin, skip, revert, accept, reject, review. Each opens the run as its
// writer; when another process holds the lock (the loop is running) the action is queued for it instead.
#include "clicommand.h"

#include "runloader.h"
#include "runlock.h"
#include "runstore.h"

#include <QTextStream>

namespace ak::cli {

namespace {

struct Steer
{
    const char *name;
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
    if (args.contains(QStringLiteral("--help")) || args.contains(QStringLiteral("-h"))) {
        QTextStream(stdout) << "Usage: autokernel-cli " << cmd.name << ' ' << cmd.usage << '\n'
                            << "If the loop is running in another process, the request is queued for it.\n";
        return 0;
    }
    const QString reason = takeReason(args);
    const bool undo = args.removeAll(QStringLiteral("--undo")) > 0;
    const int expected = 1 + (cmd.kernelArg ? 1 : 0) + (cmd.idArg ? 1 : 0);
    if (args.size() != expected)
        return printUsageError(QStringLiteral("%1: usage: %1 %2").arg(QLatin1String(cmd.name), QLatin1String(cmd.usage)));
    const QString dir = args[0];
    const QString kernel = cmd.kernelArg ? args[1] : QString();
    int id = 0;
    if (cmd.idArg) {
        bool ok = false;
        id = args.last().toInt(&ok);
        if (!ok || id <= 0)
            return printUsageError(QStringLiteral("%1: experiment id must be a positive number, not '%2'").arg(QLatin1String(cmd.name), args.last()));
    }
    QString action = QLatin1String(cmd.name);
    if (undo && action == QLatin1String("skip"))
        action = QStringLiteral("unskip");

    QString error;
    auto store = RunStore::open(dir, &error);
    if (!store) {
        const qint64 holder = RunLock::holderPid(dir);
        if (holder == 0)
            return printUsageError(error);
        nlohmann::json request{{"action", action.toStdString()}, {"kernel", kernel.toStdString()}, {"experiment", id},
                               {"reason", reason.toStdString()}};
        if (!RunStore::queueRequest(dir, request, &error))
            return printUsageError(error);
        QTextStream(stdout) << action << ": queued for the writer of the run (pid " << holder
                            << "), which applies it between experiments\n";
        return 0;
    }
    for (const QString &note : store->repairNotes())
        QTextStream(stderr) << "repair: " << note << '\n';

    bool ok = false;
    QString done;
    if (action == QLatin1String("pin"))
        ok = store->pin(kernel, reason, &error);
    else if (action == QLatin1String("unpin"))
        ok = store->unpin(kernel, &error);
    else if (action == QLatin1String("skip"))
        ok = store->skip(kernel, reason, &error);
    else if (action == QLatin1String("unskip"))
        ok = store->unskip(kernel, &error);
    else if (action == QLatin1String("revert")) {
        const Experiment e = store->revert(kernel, id, &error);
        ok = e.id != 0;
        done = QStringLiteral(" (new experiment #%1, commit %2)").arg(e.id).arg(e.commit.left(12));
    } else if (action == QLatin1String("accept"))
        ok = store->accept(id, &error);
    else if (action == QLatin1String("reject"))
        ok = store->reject(id, reason, &error);
    if (!ok) {
        QTextStream(stderr) << "autokernel-cli " << action << ": " << error << '\n';
        return 1;
    }
    QTextStream(stdout) << action << ": done" << done << '\n';
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
        .arg(ids.size()).arg(ids.size() == 1 ? QString() : QStringLiteral("s"), ids.join(QStringLiteral(", ")));
}

QString modeText(bool on)
{
    return on ? QStringLiteral("on (a would-be keep waits as pending until accepted or rejected)")
              : QStringLiteral("off (the loop keeps improvements itself)");
}

} // namespace

// review RUN_DIR [on|off]: shows or switches review mode (RunStore::setReviewMode, or the request
// {"action":"review","value":bool} queued for the run's writer).
int runReview(const QStringList &argsIn)
{
    const QString usage = QStringLiteral("review RUN_DIR [on|off]");
    QStringList args = argsIn;
    if (args.contains(QStringLiteral("--help")) || args.contains(QStringLiteral("-h"))) {
        QTextStream(stdout) << "Usage: autokernel-cli " << usage << "\n"
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
        QTextStream(stdout) << "review mode: " << modeText(run->reviewMode) << '\n' << pendingText(*run) << '\n';
        return 0;
    }
    const QString word = args.at(1).toLower();
    if (word != QLatin1String("on") && word != QLatin1String("off"))
        return printUsageError(QStringLiteral("review: expected 'on' or 'off', not '%1'").arg(args.at(1)));
    const bool on = word == QLatin1String("on");

    auto store = RunStore::open(dir, &error);
    if (!store) {
        const qint64 holder = RunLock::holderPid(dir);
        if (holder == 0)
            return printUsageError(error);
        if (!RunStore::queueRequest(dir, nlohmann::json{{"action", "review"}, {"value", on}}, &error))
            return printUsageError(error);
        QTextStream(stdout) << "review mode " << word << ": queued for the writer of the run (pid " << holder
                            << "), which applies it between experiments\n";
        return 0;
    }
    for (const QString &note : store->repairNotes())
        QTextStream(stderr) << "repair: " << note << '\n';
    if (store->state().reviewMode != on && !store->setReviewMode(on, &error)) {
        QTextStream(stderr) << "autokernel-cli review: " << error << '\n';
        return 1;
    }
    QTextStream(stdout) << "review mode: " << modeText(store->state().reviewMode) << '\n'
                        << pendingText(store->state()) << '\n';
    return 0;
}

int runPin(const QStringList &a) { return steer({"pin", "RUN_DIR KERNEL [--reason TEXT]", true, false}, a); }
int runUnpin(const QStringList &a) { return steer({"unpin", "RUN_DIR KERNEL", true, false}, a); }
int runSkip(const QStringList &a) { return steer({"skip", "RUN_DIR KERNEL [--reason TEXT] [--undo]", true, false}, a); }
int runRevert(const QStringList &a) { return steer({"revert", "RUN_DIR KERNEL EXPERIMENT_ID", true, true}, a); }
int runAccept(const QStringList &a) { return steer({"accept", "RUN_DIR EXPERIMENT_ID", false, true}, a); }
int runReject(const QStringList &a) { return steer({"reject", "RUN_DIR EXPERIMENT_ID [--reason TEXT]", false, true}, a); }

} // namespace ak::cli
