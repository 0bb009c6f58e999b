#pragma once

#include "deviceinfo.h"

#include <QLabel>

#include <functional>

namespace ak {

// Status bar label for the device of this machine. Detection may touch drivers (NVML, CUDA) and
// take a while, so it runs off the GUI thread; the label says "Detecting…" meanwhile.
class DeviceStatus : public QLabel
{
    Q_OBJECT
public:
    using Detector = std::function<DeviceInfo()>;

    explicit DeviceStatus(QWidget *parent = nullptr);

    void startDetection(Detector detector);
    bool isDetected() const { return m_detected; }
    const DeviceInfo &device() const { return m_device; }

    static QString tooltipFor(const DeviceInfo &device);

Q_SIGNALS:
    void detected(const ak::DeviceInfo &device);

private:
    DeviceInfo m_device;
    bool m_detected = false;
    quint64 m_generation = 0;
};

} // namespace ak
