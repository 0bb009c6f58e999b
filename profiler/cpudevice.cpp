#include "cpudevice.h"

#include <QFile>
#include <QSysInfo>
#include <QThread>

namespace ak {

DeviceInfo cpuDevice()
{
    DeviceInfo d;
    d.available = true;
    d.vendor = QStringLiteral("cpu");
    d.detectedBy = QStringLiteral("cpu");
    QString model;
    QFile f(QStringLiteral("/proc/cpuinfo"));
    if (f.open(QIODevice::ReadOnly)) {
        const QList<QByteArray> lines = f.readAll().split('\n');
        for (const QByteArray &line : lines) {
            if (line.startsWith("model name")) {
                model = QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
                break;
            }
        }
    }
    if (model.isEmpty())
        model = QSysInfo::currentCpuArchitecture();
    d.name = QStringLiteral("CPU: %1 (%2 threads)").arg(model).arg(QThread::idealThreadCount());
    d.smCount = 0;
    d.note = QStringLiteral("no GPU in use; CPU kernels are timed, no roofline claimed");
    return d;
}

} // namespace ak
