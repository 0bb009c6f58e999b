#pragma once

#include <QStringList>

namespace ak::cli {

// One `autokernel-cli` subcommand. `run` receives the arguments after the subcommand name and
// returns the process exit code (0 ok, 1 a negative result such as an incorrect kernel, 2 usage or
// environment error).
struct Command
{
    const char *name;
    const char *summary;
    int (*run)(const QStringList &args);
};

// All subcommands, in the order `--help` lists them. Defined in commands.cpp.
const Command *commands(int *count);

int printUsageError(const QString &message);

} // namespace ak::cli
