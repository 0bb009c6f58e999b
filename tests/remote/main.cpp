#include "testregistry.h"

#include <QStandardPaths>

#ifdef AUTOKERNEL_REMOTE_WINDOW
#include <QApplication>
using Application = QApplication; // the window test (tst_remotewindow.cpp) needs widgets
#else
#include <QCoreApplication>
using Application = QCoreApplication;
#endif

int main(int argc, char **argv)
{
    // Settings and caches of the window under test go to a test location, never the user's.
    QStandardPaths::setTestModeEnabled(true);
    Application app(argc, argv);
    Application::setOrganizationName(QStringLiteral("AutoKernelTest"));
    Application::setApplicationName(QStringLiteral("tst_remote"));
    return ak::test::runAll(argc, argv);
}
