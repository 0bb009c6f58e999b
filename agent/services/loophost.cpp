#include "services/loophost.h"

#include "loopcontrol.h"
#include "services/directorycontrol.h"

#include <QDir>

namespace ak {

LoopHost::LoopHost(QObject *parent)
    : QObject(parent)
{ }

LoopHost::~LoopHost() = default; // children (the DirectoryControl, a loop) go with it

void LoopHost::setFactory(Factory factory)
{
    m_factory = std::move(factory);
    Q_EMIT startAvailabilityChanged();
}

void LoopHost::setRunDir(const QString &runDir)
{
    const QString dir = runDir.isEmpty() ? QString() : QDir(runDir).absolutePath();
    if (dir == m_runDir)
        return;
    m_runDir = dir;
    if (m_loop) {
        LoopControl *old = m_loop;
        m_loop = nullptr;
        retire(old);
    }
    delete m_directory;
    m_directory = nullptr;
    makeDirectoryControl();
    updateCurrent();
    Q_EMIT startAvailabilityChanged();
}

void LoopHost::makeDirectoryControl()
{
    // Not while an override steers: a remote run's mirror must not be probed (probing takes the lock
    // for a moment, which would write into the copy); made when the override goes.
    if (m_directory || m_runDir.isEmpty() || m_override)
        return;
    m_directory = new DirectoryControl(m_runDir, this);
    connect(m_directory, &DirectoryControl::writerChanged, this, &LoopHost::startAvailabilityChanged);
}

void LoopHost::setOverride(LoopControl *control)
{
    m_override = control;
    makeDirectoryControl();
    updateCurrent();
    Q_EMIT startAvailabilityChanged();
}

void LoopHost::updateCurrent()
{
    LoopControl *next = m_override ? m_override.data() : m_loop ? m_loop : m_directory;
    if (next == m_current)
        return;
    m_current = next;
    Q_EMIT controlChanged(next);
}

QString LoopHost::whyCannotStart() const
{
    if (m_runDir.isEmpty())
        return QStringLiteral("no run is open");
    if (!m_factory)
        return QStringLiteral("this build has no in-process loop (no loop factory is set); run "
                              "`autokernel-cli run RUN_DIR` and steer it from here");
    if (m_override)
        return QStringLiteral("%1 steers this window").arg(m_override->description());
    if (m_loop)
        return QStringLiteral("the loop is already running in this window");
    if (!m_directory || !m_directory->isWriterKnown())
        return QStringLiteral("checking whether another process is running the loop on this run…");
    if (m_directory->writerPid() != 0)
        return QStringLiteral("another process (pid %1) is running the loop on this run; steer it from here, "
                              "or stop it to start one in this window")
            .arg(m_directory->writerPid());
    return QString();
}

void LoopHost::startLoop()
{
    const QString why = whyCannotStart();
    if (!why.isEmpty()) {
        Q_EMIT message(QStringLiteral("start: ") + why);
        return;
    }
    LoopControl *loop = m_factory(m_runDir, this);
    if (!loop) {
        Q_EMIT message(QStringLiteral("start: the loop could not be created for %1").arg(m_runDir));
        return;
    }
    m_loop = loop;
    m_loopStarted = false;
    m_stopAsked = false;
    connect(loop, &LoopControl::stateChanged, this, &LoopHost::onLoopState);
    connect(loop, &LoopControl::actionFailed, this, [this, loop](const QString &action, const QString &) {
        // A start that fails leaves the loop Stopped without ever running: go back to steering the
        // directory. Queued: the loop is still inside start() when it reports this.
        if (action == QLatin1String("start") && loop == m_loop && !m_loopStarted)
            QMetaObject::invokeMethod(
                this,
                [this, loop] {
                    if (loop == m_loop)
                        dropLoop();
                },
                Qt::QueuedConnection);
    });
    // Attach before start() so the window's log sees what start() reports.
    updateCurrent();
    Q_EMIT startAvailabilityChanged();
    loop->start();
}

void LoopHost::onLoopState()
{
    if (!m_loop)
        return;
    const LoopControl::State s = m_loop->state();
    if (s == LoopControl::State::Running || s == LoopControl::State::Paused) {
        m_loopStarted = true;
    } else if (s == LoopControl::State::Stopping) {
        m_stopAsked = true;
    } else if (s == LoopControl::State::Stopped && m_loopStarted) {
        m_loopStarted = false;
        Q_EMIT loopEnded(m_runDir, !m_stopAsked);
        // Stopped by the user or ended on its own (all kernels done, budget): the directory steers again.
        QMetaObject::invokeMethod(
            this,
            [this, loop = m_loop] {
                if (loop == m_loop)
                    dropLoop();
            },
            Qt::QueuedConnection);
    }
}

void LoopHost::dropLoop()
{
    LoopControl *loop = m_loop;
    m_loop = nullptr;
    if (!loop)
        return;
    disconnect(loop, nullptr, this, nullptr);
    updateCurrent();
    loop->deleteLater();
    if (m_directory)
        m_directory->refresh(); // the lock this process held is free again
    Q_EMIT startAvailabilityChanged();
}

void LoopHost::retire(LoopControl *loop)
{
    disconnect(loop, nullptr, this, nullptr);
    if (loop->state() == LoopControl::State::Stopped) {
        loop->deleteLater();
        return;
    }
    Q_EMIT message(QStringLiteral("stopping the loop on the previous run"));
    connect(loop, &LoopControl::stateChanged, loop, [loop](LoopControl::State s) {
        if (s == LoopControl::State::Stopped)
            loop->deleteLater();
    });
    loop->stop();
}

void LoopHost::refresh()
{
    if (m_directory)
        m_directory->refresh();
}

} // namespace ak
