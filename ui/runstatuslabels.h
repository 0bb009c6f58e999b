#pragma once

#include "runsnapshot.h"

#include <QObject>

class QLabel;
class QWidget;

namespace ak {

// The status bar's two labels about the shown run: the device its experiments were measured on, and
// whether it is in review mode (with how many experiments wait for a person). Both stay hidden until
// a run is shown; the window places them among its other permanent widgets, so it keeps their order.
class RunStatusLabels : public QObject
{
    Q_OBJECT
public:
    explicit RunStatusLabels(QWidget *window); // the labels' parent

    QLabel *runDevice() const { return m_runDevice; }
    QLabel *reviewMode() const { return m_reviewMode; } // shown only while the run is in review mode

    void showRun(const RunSnapshot &snapshot);

private:
    QLabel *m_runDevice;
    QLabel *m_reviewMode;
};

} // namespace ak
