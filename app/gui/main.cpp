// autokernel: the desktop application. Everything but argument handling lives in ui/.
#include "mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("autokernel"));
    QApplication::setApplicationDisplayName(QStringLiteral("AutoKernel Studio"));
    QApplication::setOrganizationName(QStringLiteral("AutoKernel"));
    QApplication::setApplicationVersion(QStringLiteral(AUTOKERNEL_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("AutoKernel Studio: profile a PyTorch model, rank its GPU "
                                                    "kernels and optimise them in an autonomous loop."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("RUN_DIR"), QStringLiteral("run directory to open (optional)"));
    parser.process(app);

    ak::MainWindow window;
    const QStringList positional = parser.positionalArguments();
    if (!positional.isEmpty())
        window.openRun(positional.first());
    window.show();
    return app.exec();
}
