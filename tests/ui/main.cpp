#include "testregistry.h"

#include <QApplication>
#include <QStandardPaths>

int main(int argc, char **argv)
{
    // Settings (recent runs, geometry) go to a test location, never the user's configuration.
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("AutoKernelTest"));
    QApplication::setApplicationName(QStringLiteral("tst_ui"));
    return ak::test::runAll(argc, argv);
}
