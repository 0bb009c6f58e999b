// autokernel: the desktop application. Everything but argument handling lives in ui/.
#include "loop/localloop.h"
#include "mainwindow.h"
#include "services/agentsettings.h"
#include "services/examplerun.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QTextStream>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("autokernel"));
    QApplication::setApplicationDisplayName(QStringLiteral("AutoKernel Studio"));
    QApplication::setOrganizationName(QStringLiteral("AutoKernel"));
    QApplication::setApplicationVersion(QStringLiteral(AUTOKERNEL_VERSION));

    // Bundled example models (profiled here the first time) and recordings of real runs (restored).
    const QStringList examples = ak::ExampleRun::names() + ak::ExampleRun::recordings();
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("AutoKernel Studio: profile a PyTorch model, rank its GPU "
                       "kernels and optimise them in an autonomous loop."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({ QStringLiteral("example"),
        QStringLiteral("open the run of a bundled example model (%1; the first time it is profiled on "
                       "this machine, in the background) or a recording of a real GPU run (%2)")
            .arg(ak::ExampleRun::names().join(QStringLiteral(", ")),
                ak::ExampleRun::recordings().join(QStringLiteral(", "))),
        QStringLiteral("NAME") });
    parser.addPositionalArgument(QStringLiteral("RUN_DIR"),
        QStringLiteral(
            "run directory to open (optional), or a run on another machine as "
            "ssh://[user@]host[:port]/path/to/run (followed live over ssh and rsync; docs/remote.md)"));
    parser.process(app);

    const QStringList positional = parser.positionalArguments();
    const QString example = parser.value(QStringLiteral("example"));
    QTextStream err(stderr);
    if (!example.isEmpty() && !examples.contains(example)) {
        err << "autokernel: no bundled example '" << example << "'; choose one of "
            << examples.join(QStringLiteral(", ")) << Qt::endl;
        return 2;
    }
    if (!example.isEmpty() && !positional.isEmpty()) {
        err << "autokernel: give either RUN_DIR or --example, not both" << Qt::endl;
        return 2;
    }

    ak::MainWindow window;
    // Loop ▸ Start runs the loop in this process (one thread per device) with what Loop ▸ Agent… saved
    // in the settings store (agent, devices, Python, a stored key), else the run's agent from run.json
    // (tune by default); steering works on any open run through its directory either way.
    window.setLoopFactory([](const QString &runDir, QObject *parent) -> ak::LoopControl * {
        QSettings settings;
        return new ak::LocalLoop(ak::AgentSettings::loopOptions(runDir, settings), parent);
    });
    if (!example.isEmpty())
        window.openExample(example);
    else if (!positional.isEmpty())
        window.openRun(positional.first());
    window.show();
    return app.exec();
}
