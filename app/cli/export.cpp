// autokernel-cli export RUN_DIR --out DIR [--name PACKAGE]: the verified final set as a standalone
// Python package (apply(model) / restore(model)), with a README quoting the measured numbers.
#include "clicommand.h"

#include "pythonlocator.h"
#include "runloader.h"
#include "workerclient.h"

#include <nlohmann/json.hpp>

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QTextStream>

namespace ak::cli {

int runExport(const QStringList &args)
{
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("RUN_DIR"), QStringLiteral("a verified run directory"));
    p.addOptions({
        {QStringLiteral("out"), QStringLiteral("directory to write the package into (created)"), QStringLiteral("DIR")},
        {QStringLiteral("name"), QStringLiteral("the package's name (default autokernel_kernels)"), QStringLiteral("PACKAGE")},
        {QStringLiteral("python"), QStringLiteral("Python interpreter (default: the run's)"), QStringLiteral("PY")},
    });
    p.addHelpOption();
    if (!p.parse(QStringList{QStringLiteral("autokernel-cli export")} + args))
        return printUsageError(p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    if (p.positionalArguments().size() != 1 || !p.isSet(QStringLiteral("out")))
        return printUsageError(QStringLiteral("export: give one run directory and --out DIR"));
    const QString runDir = p.positionalArguments().first();
    QString error;
    const RunSnapshotPtr run = RunLoader::load(runDir, &error);
    if (!run)
        return printUsageError(error);
    QFile f(QDir(runDir).filePath(QStringLiteral("verification.json")));
    if (!f.open(QIODevice::ReadOnly))
        return printUsageError(QStringLiteral("%1 has no verification.json: run autokernel-cli verify %1 first").arg(runDir));
    const QByteArray data = f.readAll();
    const nlohmann::json v = nlohmann::json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (!v.is_object() || v.value("format", "") != "autokernel-verification")
        return printUsageError(QStringLiteral("%1: not a verification written by autokernel-cli verify").arg(f.fileName()));
    const QString out = QDir(p.value(QStringLiteral("out"))).absolutePath();
    if (!QDir().mkpath(out))
        return printUsageError(QStringLiteral("cannot create %1").arg(out));
    const PythonLocator::Choice python = PythonLocator::forRun(run->runJson, p.value(QStringLiteral("python")));
    if (!python.ok())
        return printUsageError(QStringLiteral("no usable Python: ") + python.error);
    WorkerClient worker;
    worker.setPython(python.python);
    nlohmann::json a{{"run_dir", QDir(runDir).absolutePath().toStdString()}, {"out_dir", out.toStdString()}, {"verification", v}};
    if (p.isSet(QStringLiteral("name")))
        a["package"] = p.value(QStringLiteral("name")).toStdString();
    const WorkerReply reply = worker.request(QStringLiteral("export"), a, 120000);
    if (!reply.ok()) {
        QTextStream(stderr) << "autokernel-cli: export: " << reply.error << Qt::endl;
        return reply.status == WorkerReply::Status::Error ? 1 : 2;
    }
    QTextStream o(stdout);
    o << "package " << QString::fromStdString(reply.result.value("package_dir", "")) << " with "
      << reply.result.value("kernels", nlohmann::json::array()).size() << " kernel(s), measured "
      << QString::number(v.value("model_speedup", 0.0), 'f', 3) << "x over eager\n";
    for (const auto &file : reply.result.value("files", nlohmann::json::array()))
        o << "  " << QString::fromStdString(file.get<std::string>()) << '\n';
    return 0;
}

} // namespace ak::cli
