#include "testregistry.h"

#include <QApplication>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    return ak::test::runAll(argc, argv);
}
