#include "mainwindow.h"

#include "cpudevice.h"

#include <QLabel>
#include <QStatusBar>

namespace ak {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("AutoKernel Studio"));
    m_deviceLabel = new QLabel(cpuDevice().summary(), this);
    statusBar()->addPermanentWidget(m_deviceLabel);
    resize(1400, 900);
}

MainWindow::~MainWindow() = default;

void MainWindow::openRun(const QString &runDir)
{
    setWindowTitle(QStringLiteral("%1 — AutoKernel Studio").arg(runDir));
}

} // namespace ak
