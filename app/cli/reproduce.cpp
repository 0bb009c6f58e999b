// autokernel-cli reproduce DIR [--python PY] [--pairs N] [--json]: re-runs an exported package's
// measurement on this machine (each kernel's cold re-check, paired against PyTorch on its contract) and
// says whether it agrees with what the package recorded (within the recorded spread of the paired
// ratios), or the difference; a device, driver, torch or judge that differs is named (#43 item 4).
#include "clicommand.h"

#include "pythonlocator.h"
#include "workerclient.h"

#include <nlohmann/json.hpp>

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTextStream>

namespace ak::cli {

int runReproduce(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Re-measure an exported package (autokernel-cli export) and compare with what it recorded."));
    p.addPositionalArgument(
        QStringLiteral("DIR"), QStringLiteral("the export directory (or the package in it)"));
    p.addOptions({
        { QStringLiteral("python"), QStringLiteral("Python interpreter with torch (default: auto-detect)"),
            QStringLiteral("PY") },
        { QStringLiteral("pairs"), QStringLiteral("paired rounds per kernel (default: as many as recorded)"),
            QStringLiteral("N") },
        { QStringLiteral("json"), QStringLiteral("print the worker's whole report as JSON") },
        { QStringLiteral("timeout"),
            QStringLiteral("seconds before the measurement is abandoned (default 1800)"),
            QStringLiteral("SEC"), QStringLiteral("1800") },
    });
    p.addHelpOption();
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli reproduce") } + args))
        return printUsageError(p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    if (p.positionalArguments().size() != 1)
        return printUsageError(QStringLiteral("reproduce: give one export directory"));
    const QString dir = QFileInfo(p.positionalArguments().first()).absoluteFilePath();
    if (!QFileInfo(dir).isDir())
        return printUsageError(QStringLiteral("reproduce: %1 is not a directory").arg(dir));
    nlohmann::json request { { "dir", dir.toStdString() } };
    if (p.isSet(QStringLiteral("pairs"))) {
        bool ok = false;
        const int pairs = p.value(QStringLiteral("pairs")).toInt(&ok);
        if (!ok || pairs < 2)
            return printUsageError(QStringLiteral("--pairs must be a number of rounds, 2 or more"));
        request["pairs"] = pairs;
    }
    bool ok = false;
    const int timeout = p.value(QStringLiteral("timeout")).toInt(&ok);
    if (!ok || timeout <= 0)
        return printUsageError(QStringLiteral("--timeout must be a positive number of seconds"));

    PythonLocator locator;
    locator.setExplicit(p.value(QStringLiteral("python")));
    const PythonLocator::Choice python = locator.locate();
    QTextStream err(stderr);
    if (!python.ok()) {
        err << "autokernel-cli: reproduce: no usable Python: " << python.error << Qt::endl;
        return 2;
    }
    WorkerClient worker;
    worker.setPython(python.python);
    const WorkerReply r = worker.request(QStringLiteral("reproduce"), request, timeout * 1000);
    if (!r.ok()) {
        err << "autokernel-cli: reproduce: " << r.error << Qt::endl;
        return 2;
    }
    QTextStream out(stdout);
    if (p.isSet(QStringLiteral("json"))) {
        out << QString::fromStdString(r.result.dump(2)) << '\n';
    } else {
        out << "package " << QString::fromStdString(r.result.value("package", std::string())) << '\n';
        for (const auto &line : r.result.value("lines", nlohmann::json::array()))
            if (line.is_string())
                out << "  " << QString::fromStdString(line.get<std::string>()) << '\n';
        out << (r.result.value("agree", false) ? "reproduced: every kernel agrees with the recorded numbers\n"
                                               : "NOT reproduced: see the differences above\n");
    }
    return r.result.value("agree", false) ? 0 : 1;
}

} // namespace ak::cli
