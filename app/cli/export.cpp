// autokernel-cli export RUN_DIR --out DIR [--name PACKAGE] [--mode eager|compile]: the verified final
// set as a standalone Python package (apply(model) / restore(model)), with a README quoting the
// measured numbers; --mode says how apply() plugs (default: the mode verify chose the set in).
#include "clicommand.h"

#include "loop/modelverifier.h"

#include <QCommandLineParser>
#include <QTextStream>

namespace ak::cli {

int runExport(const QStringList &args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN_DIR"), QStringLiteral("a verified run directory"));
    p.addOptions({
        { QStringLiteral("out"), QStringLiteral("directory to write the package into (created)"),
            QStringLiteral("DIR") },
        { QStringLiteral("name"), QStringLiteral("the package's name (default autokernel_kernels)"),
            QStringLiteral("PACKAGE") },
        { QStringLiteral("python"), QStringLiteral("Python interpreter (default: the run's)"),
            QStringLiteral("PY") },
        { QStringLiteral("mode"),
            QStringLiteral("eager or compile: how the package's apply() plugs the kernels (compile: as "
                           "torch.library custom ops for torch.compile; default: the verification's mode)"),
            QStringLiteral("MODE") },
    });
    p.addHelpOption();
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli export") } + args))
        return printUsageError(p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    if (p.positionalArguments().size() != 1 || !p.isSet(QStringLiteral("out")))
        return printUsageError(QStringLiteral("export: give one run directory and --out DIR"));
    ExportOptions o;
    o.runDir = p.positionalArguments().first();
    o.outDir = p.value(QStringLiteral("out"));
    o.package = p.value(QStringLiteral("name"));
    o.python = p.value(QStringLiteral("python"));
    o.mode = p.value(QStringLiteral("mode"));
    if (p.isSet(QStringLiteral("mode")))
        if (const QString why = ModelVerifier::modeError(o.mode, QStringLiteral("--mode")); !why.isEmpty())
            return printUsageError(why);
    const ExportOutcome r = ModelVerifier::exportPackage(o);
    if (!r.ok) {
        QTextStream(stderr) << "autokernel-cli: export: " << r.error << Qt::endl;
        return r.environmentError ? 2 : 1;
    }
    QTextStream out(stdout);
    out << "package " << r.packageDir << " with " << r.kernels << " kernel(s), measured "
        << QString::number(r.modelSpeedup, 'f', 3) << "x over eager\n";
    out << "mode " << r.mode;
    if (!r.chosenInMode.isEmpty() && r.chosenInMode != r.mode)
        out << " (the set was chosen in " << r.chosenInMode << " mode: verify --mode " << r.mode
            << " chooses it for " << r.mode << ")";
    out << '\n';
    for (const QString &file : r.files)
        out << "  " << file << '\n';
    return 0;
}

} // namespace ak::cli
