#include "steeroutcome.h"

#include "clicommand.h"

#include <QTextStream>

namespace ak::cli {

int reportSteerOutcome(const RunSteering::Outcome &o, const QString &command, const QString &queuedLine)
{
    for (const QString &note : o.repairNotes)
        QTextStream(stderr) << "repair: " << note << '\n';
    switch (o.kind) {
    case RunSteering::Outcome::Kind::Failed:
        return printUsageError(o.message);
    case RunSteering::Outcome::Kind::Queued:
        QTextStream(stdout) << queuedLine << '\n';
        return 0;
    case RunSteering::Outcome::Kind::Refused:
        QTextStream(stderr) << "autokernel-cli " << command << ": " << o.message << '\n';
        return 1;
    case RunSteering::Outcome::Kind::Applied:
        break;
    }
    return -1;
}

} // namespace ak::cli
