#include "loopsummarystatus.h"

#include "loopcontrol.h"
#include "remoterunopener.h"
#include "services/directorycontrol.h"
#include "services/loophost.h"
#include "widgets/steeringactions.h"

namespace ak {

LoopSummaryStatus::LoopSummaryStatus(
    LoopHost *loops, RemoteRunOpener *remote, SteeringActions *steering, QObject *parent)
    : QObject(parent)
    , m_loops(loops)
    , m_remote(remote)
    , m_steering(steering)
{
    connect(m_loops, &LoopHost::startAvailabilityChanged, this, &LoopSummaryStatus::update);
    connect(m_remote, &RemoteRunOpener::connectionChanged, this, &LoopSummaryStatus::updateLoop);
    updateLauncher(); // before any run: Start's tooltip says why it cannot start yet
}

void LoopSummaryStatus::setControl(LoopControl *control)
{
    if (m_control)
        disconnect(m_control, nullptr, this, nullptr);
    m_control = control;
    updateLoop();
    if (control)
        connect(control, &LoopControl::stateChanged, this, &LoopSummaryStatus::updateLoop);
    updateLauncher();
}

void LoopSummaryStatus::update()
{
    updateLoop();
    updateLauncher();
}

void LoopSummaryStatus::updateLoop()
{
    // Where the open run's loop runs, as this window knows it: its own loop, another process that
    // holds the run's lock (DirectoryControl polls it), or none.
    QString where;
    const LoopControl *own = m_loops->loop();
    if (own && own->state() != LoopControl::State::Stopped)
        where = tr("in this window");
    else if (m_remote->isSteering())
        where = m_remote->loopSummary();
    else if (const DirectoryControl *dir = m_loops->directoryControl(); dir && dir->writerPid() != 0)
        where = tr("in another process (pid %1)").arg(dir->writerPid());
    // A CLI loop with --slurm: its job, so that squeue / scancel find it.
    if (!where.isEmpty() && (!own || own->state() == LoopControl::State::Stopped) && m_run
        && m_run->config.workerSlurmJob > 0 && !m_run->config.workerSlurm.isEmpty())
        where += tr(", Slurm job %1").arg(m_run->config.workerSlurmJob);
    Q_EMIT loopChanged(where);
}

void LoopSummaryStatus::updateLauncher()
{
    // A recording's experiments were measured on another machine: going on here would mix the two.
    const QString whyNot = m_run && !m_run->recording.isEmpty()
        ? tr(
            "This run is %1: its numbers come from that machine. Profile your own model (File ▸ New Run…) to "
            "run the loop.")
              .arg(m_run->recording)
        : m_loops->whyCannotStart();
    m_steering->setLauncher([this] { m_loops->startLoop(); }, whyNot);
}

} // namespace ak
