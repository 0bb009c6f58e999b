#include "services/remotesession.h"

#include "runmirror.h"
#include "services/remotecontrol.h"

namespace ak {

RemoteSession::RemoteSession(const RemoteRun &run, QObject *parent)
    : QObject(parent)
    , m_run(run)
    , m_mirror(new RunMirror(run, this))
    , m_control(new RemoteControl(run, m_mirror->localDir(), this))
{
    connect(m_mirror, &RunMirror::synced, this, [this](bool, bool copied) {
        if (!m_connected) {
            m_connected = true;
            Q_EMIT reconnected();
        }
        if (!m_ready) {
            m_ready = true;
            Q_EMIT ready(localDir());
        } else if (copied) {
            Q_EMIT changed();
        }
    });
    connect(m_mirror, &RunMirror::failed, this, [this](const QString &error, bool) {
        if (!m_ready) {
            Q_EMIT problem(error, true);
            return;
        }
        if (m_connected) { // once per outage, not every retry
            m_connected = false;
            Q_EMIT problem(error, false);
        }
    });
}

RemoteSession::~RemoteSession() = default;

QString RemoteSession::localDir() const
{
    return m_mirror->localDir();
}

void RemoteSession::start()
{
    m_mirror->start();
}

} // namespace ak
