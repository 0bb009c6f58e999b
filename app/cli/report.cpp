// autokernel-cli report RUN_DIR --out FILE.html: the run as one self-contained HTML file (summary,
// ranked kernels, charts, the model's verification, kept diffs, environment) to share a run on a
// server without the window. Read through the same loader as the window; works while a loop runs.
#include "clicommand.h"

#include "runreport.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTextStream>

namespace ak::cli {

int runReport(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Write a run as one self-contained HTML report."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("RUN_DIR"), QStringLiteral("the run directory"));
    p.addOption(
        { QStringLiteral("out"), QStringLiteral("the HTML file to write"), QStringLiteral("FILE.html") });
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli report") } + args))
        return printUsageError(QStringLiteral("report: ") + p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    if (p.positionalArguments().size() != 1)
        return printUsageError(QStringLiteral("report: give one run directory"));
    if (!p.isSet(QStringLiteral("out")))
        return printUsageError(QStringLiteral("report: --out FILE.html is required"));
    const QString out = p.value(QStringLiteral("out"));
    QElapsedTimer clock;
    clock.start();
    QString error;
    if (!RunReport::write(p.positionalArguments().first(), out, &error)) {
        QTextStream(stderr) << "autokernel-cli: report: " << error << Qt::endl;
        return 2;
    }
    QTextStream(stdout) << "report written to " << QFileInfo(out).absoluteFilePath() << " ("
                        << QFileInfo(out).size() / 1024 << " KiB, " << clock.elapsed() << " ms)" << Qt::endl;
    return 0;
}

} // namespace ak::cli
