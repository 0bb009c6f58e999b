#pragma once

#include "runsnapshot.h"

#include <QObject>
#include <QPointer>
#include <QString>

namespace ak {

class LoopControl;
class LoopHost;
class RemoteRunOpener;
class SteeringActions;

// Where the shown run's loop runs (this window's own loop, a remote session, another process that
// holds the run's lock, with its Slurm job), and whether Loop ▸ Start may start one here. It follows
// the host, the remote session and the attached control by itself; the text leaves through
// loopChanged, so that the window decides which views show it.
class LoopSummaryStatus : public QObject
{
    Q_OBJECT
public:
    // loops, remote: what the loop is looked for in; steering: whose launcher Start is. Not owned.
    LoopSummaryStatus(LoopHost *loops, RemoteRunOpener *remote, SteeringActions *steering, QObject *parent);

    // The run shown, or to be shown after a replay: its recording and Slurm job are read from it.
    // Nothing is updated here, so that the window decides when (update()).
    void setRun(const RunSnapshotPtr &run) { m_run = run; }
    // The control steering the shown run (nullptr: none); its state changes update the summary. Not owned.
    void setControl(LoopControl *control);
    // Says again where the loop runs (loopChanged) and what Start does.
    void update();

Q_SIGNALS:
    // Empty: no loop runs that this window knows of.
    void loopChanged(const QString &where);

private:
    void updateLoop();
    void updateLauncher();

    LoopHost *m_loops;
    RemoteRunOpener *m_remote;
    SteeringActions *m_steering;
    QPointer<LoopControl> m_control;
    RunSnapshotPtr m_run;
};

} // namespace ak
