// autokernel-cli record RUN_DIR --out FILE.json [--note TEXT] and
// autokernel-cli restore FILE.json --out RUN_DIR: a run as one text file and back (RunRecording), so
// that a real GPU run ships with the app and opens, labelled a recording, on any machine.
#include "clicommand.h"

#include "runrecording.h"

#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QTextStream>

namespace ak::cli {

namespace {

// Parses `args` for `command` with one positional argument and a required --out; 0 when parsed.
int parseOneAndOut(QCommandLineParser &p, const QString &command, const QString &positional,
    const QString &outName, const QStringList &args)
{
    p.addHelpOption();
    p.addPositionalArgument(positional,
        positional == QLatin1String("RUN_DIR") ? QStringLiteral("the run directory")
                                               : QStringLiteral("the recording"));
    p.addOption({ QStringLiteral("out"), QStringLiteral("what to write"), outName });
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli ") + command } + args))
        return printUsageError(command + QStringLiteral(": ") + p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return -1;
    }
    if (p.positionalArguments().size() != 1)
        return printUsageError(QStringLiteral("%1: give one %2").arg(command, positional));
    if (!p.isSet(QStringLiteral("out")))
        return printUsageError(QStringLiteral("%1: --out %2 is required").arg(command, outName));
    return 0;
}

} // namespace

int runRecord(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Write a run directory as one text file (JSON): its files, commits and refs, to restore anywhere."));
    p.addOption({ QStringLiteral("note"), QStringLiteral("what the recording shows, for its viewers"),
        QStringLiteral("TEXT") });
    if (const int rc = parseOneAndOut(
            p, QStringLiteral("record"), QStringLiteral("RUN_DIR"), QStringLiteral("FILE.json"), args))
        return rc < 0 ? 0 : rc;
    const QString out = p.value(QStringLiteral("out"));
    QString error;
    if (!RunRecording::write(p.positionalArguments().first(), out, p.value(QStringLiteral("note")), &error)) {
        QTextStream(stderr) << "autokernel-cli: record: " << error << Qt::endl;
        return 2;
    }
    QTextStream(stdout) << "recording written to " << QFileInfo(out).absoluteFilePath() << " ("
                        << QFileInfo(out).size() / 1024 << " KiB)" << Qt::endl;
    return 0;
}

int runRestore(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(
        QStringLiteral("Recreate a run directory from a recording (autokernel-cli record)."));
    if (const int rc = parseOneAndOut(
            p, QStringLiteral("restore"), QStringLiteral("FILE.json"), QStringLiteral("RUN_DIR"), args))
        return rc < 0 ? 0 : rc;
    const QString in = p.positionalArguments().first();
    QFile f(in);
    if (!f.open(QIODevice::ReadOnly)) {
        QTextStream(stderr) << "autokernel-cli: restore: " << in << ": " << f.errorString() << Qt::endl;
        return 2;
    }
    QString error;
    const QString out = p.value(QStringLiteral("out"));
    if (!RunRecording::restore(f.readAll(), in, out, &error)) {
        QTextStream(stderr) << "autokernel-cli: restore: " << error << Qt::endl;
        return 2;
    }
    RunRecording::Info info;
    RunRecording::isRecording(out, &info);
    QTextStream(stdout) << "restored " << info.summary() << " into " << QFileInfo(out).absoluteFilePath()
                        << Qt::endl;
    return 0;
}

} // namespace ak::cli
