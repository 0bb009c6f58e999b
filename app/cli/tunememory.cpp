// autokernel-cli tune-memory [--clear]: what the tune agent remembers from earlier runs on this
// machine (TuneMemory: each kept configuration by device, op type, dtype and shapes), or forget it.
#include "clicommand.h"

#include "agents/tunememory.h"
#include "numberformat.h"

#include <QCommandLineParser>
#include <QTextStream>

namespace ak::cli {

int runTuneMemory(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "List the configurations the tune agent kept in earlier runs on this machine, which it tries early "
        "in "
        "the next ones, or forget them (--clear). AUTOKERNEL_TUNE_MEMORY=none turns the memory off."));
    p.addHelpOption();
    p.addOption({ QStringLiteral("clear"), QStringLiteral("forget everything remembered") });
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli tune-memory") } + args))
        return printUsageError(QStringLiteral("tune-memory: ") + p.errorText());
    QTextStream out(stdout);
    if (p.isSet(QStringLiteral("help"))) {
        out << p.helpText();
        return 0;
    }
    const QString path = TuneMemory::path();
    if (path.isEmpty()) {
        out << "the tune memory is off (AUTOKERNEL_TUNE_MEMORY=none)" << Qt::endl;
        return 0;
    }
    if (p.isSet(QStringLiteral("clear"))) {
        QString error;
        if (!TuneMemory::clear(&error)) {
            QTextStream(stderr) << "autokernel-cli: tune-memory: " << error << Qt::endl;
            return 2;
        }
        out << "forgotten: " << path << Qt::endl;
        return 0;
    }
    const QVector<TuneMemory::Entry> entries = TuneMemory::all();
    out << path << ": " << entries.size() << " remembered configuration(s)" << Qt::endl;
    for (const TuneMemory::Entry &e : entries) {
        QStringList config;
        for (auto it = e.config.constBegin(); it != e.config.constEnd(); ++it)
            config << QStringLiteral("%1=%2").arg(
                it.key(), TuneSpace::format(it.value(), it.value() == int(it.value())));
        out << QStringLiteral("%1  %2 %3 [%4]  %5  %6  (%7)")
                   .arg(e.device, e.opType, e.dtype, e.shapes, config.join(QLatin1Char(' ')),
                       formatRatio(e.speedup), e.when.date().toString(Qt::ISODate))
            << Qt::endl;
    }
    return 0;
}

} // namespace ak::cli
