#include "widgets/devicestatus.h"

#include "services/backgroundjob.h"

namespace ak {

DeviceStatus::DeviceStatus(QWidget *parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("DeviceStatus"));
    setTextInteractionFlags(Qt::TextSelectableByMouse);
}

void DeviceStatus::startDetection(Detector detector)
{
    const quint64 generation = ++m_generation;
    m_detected = false;
    setText(tr("This machine: detecting device…"));
    runInBackground(this, std::move(detector), [this, generation](const DeviceInfo &device) {
        if (generation != m_generation)
            return;
        m_device = device;
        m_detected = true;
        setText(tr("This machine: %1").arg(device.summary()));
        setToolTip(tooltipFor(device));
        Q_EMIT detected(device);
    });
}

QString DeviceStatus::tooltipFor(const DeviceInfo &d)
{
    QStringList lines;
    lines << d.name;
    if (!d.detectedBy.isEmpty())
        lines << tr("detected by %1").arg(d.detectedBy);
    if (!d.computeCapability.isEmpty())
        lines << tr("compute capability %1").arg(d.computeCapability);
    if (d.memoryGiB > 0)
        lines << tr("%1 GiB memory").arg(d.memoryGiB, 0, 'f', 0);
    for (int p = 0; p < int(Precision::Count); ++p)
        if (d.peakTflops[size_t(p)] > 0)
            lines << tr("%1 peak %2 TFLOP/s")
                         .arg(precisionName(Precision(p)))
                         .arg(d.peakTflops[size_t(p)], 0, 'f', 1);
    if (!d.note.isEmpty())
        lines << d.note;
    return lines.join(QLatin1Char('\n'));
}

} // namespace ak
