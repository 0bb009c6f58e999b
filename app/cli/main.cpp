// autokernel-cli: the headless twin of the GUI. Qt Core only, so it runs on a GPU server with no display.
#include "clicommand.h"

#include <QCoreApplication>
#include <QTextStream>

namespace {

void printHelp()
{
    QTextStream out(stdout);
    out << "Usage: autokernel-cli <command> [options]\n\n"
        << "Profile a PyTorch model, rank its GPU kernels by Amdahl's law and optimise them in an\n"
        << "autonomous loop whose every experiment is a git commit in a run directory.\n\nCommands:\n";
    int n = 0;
    const ak::cli::Command *cmds = ak::cli::commands(&n);
    for (int i = 0; i < n; ++i)
        out << "  " << QString::fromLatin1(cmds[i].name).leftJustified(10) << "  " << cmds[i].summary << '\n';
    out << "\nOptions:\n  -h, --help     show this help (or '<command> --help')\n"
        << "  -v, --version  print the version\n";
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("autokernel-cli"));
    QCoreApplication::setOrganizationName(QStringLiteral("AutoKernel"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AUTOKERNEL_VERSION));

    QStringList args = app.arguments().mid(1);
    if (args.isEmpty() || args.first() == QLatin1String("-h") || args.first() == QLatin1String("--help")
        || args.first() == QLatin1String("help")) {
        printHelp();
        return args.isEmpty() ? 2 : 0;
    }
    if (args.first() == QLatin1String("-v") || args.first() == QLatin1String("--version"))
        args.first() = QStringLiteral("version");

    const QString name = args.takeFirst();
    int n = 0;
    const ak::cli::Command *cmds = ak::cli::commands(&n);
    for (int i = 0; i < n; ++i) {
        if (name == QLatin1String(cmds[i].name))
            return cmds[i].run(args);
    }
    return ak::cli::printUsageError(QStringLiteral("unknown command '%1'").arg(name));
}
