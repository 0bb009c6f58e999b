#include "clicommand.h"

#include <QTextStream>

namespace ak::cli {

// Subcommands are implemented one per file next to this one; each is a thin layer over a library.
const Command *commands(int *count)
{
    static const Command table[] = {
        {"version", "print the version", [](const QStringList &) {
             QTextStream(stdout) << "autokernel-cli " << AUTOKERNEL_VERSION << Qt::endl;
             return 0;
         }},
    };
    *count = int(sizeof(table) / sizeof(table[0]));
    return table;
}

int printUsageError(const QString &message)
{
    QTextStream(stderr) << "autokernel-cli: " << message << Qt::endl
                        << "Try 'autokernel-cli --help'." << Qt::endl;
    return 2;
}

} // namespace ak::cli
