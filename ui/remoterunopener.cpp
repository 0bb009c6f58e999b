#include "remoterunopener.h"

#include "dialogs/remoterundialog.h"
#include "services/loophost.h"
#include "services/remotecontrol.h"
#include "services/remotesession.h"

#include <QWidget>

namespace ak {

RemoteRunOpener::RemoteRunOpener(QWidget *window, LoopHost *loops)
    : QObject(window)
    , m_window(window)
    , m_loops(loops)
{ }

RemoteRun RemoteRunOpener::parse(const QString &address, QString *error)
{
    RemoteRun run = RemoteRun::parse(address, error);
    if (run.isValid())
        RemoteRunDialog::applySettings(&run);
    return run;
}

void RemoteRunOpener::open(const RemoteRun &run)
{
    drop();
    m_session = new RemoteSession(run, this);
    const QString where = run.display();
    Q_EMIT message(LogView::Level::Info, tr("mirroring %1 into %2").arg(run.url(), m_session->localDir()));
    Q_EMIT statusMessage(tr("Copying %1…").arg(where), 0);
    Q_EMIT explanation(tr("Copying %1…").arg(where),
        tr("The first copy takes the whole run; then only "
           "what changes travels."));
    connect(m_session, &RemoteSession::ready, this, [this](const QString &dir) {
        m_loops->setOverride(m_session->control());
        Q_EMIT ready(dir);
    });
    connect(m_session, &RemoteSession::changed, this, &RemoteRunOpener::changed);
    connect(m_session, &RemoteSession::problem, this, [this, where](const QString &error, bool beforeReady) {
        if (beforeReady) {
            Q_EMIT openFailed(m_session->run().url(), error,
                tr("Still trying; File ▸ Open Remote Run… to change the address or the ssh command."));
        } else {
            Q_EMIT message(LogView::Level::Error, error);
            Q_EMIT statusMessage(tr("%1: the copy is not current (%2); still trying").arg(where, error), 0);
        }
        Q_EMIT connectionChanged();
    });
    connect(m_session, &RemoteSession::reconnected, this, [this, where] {
        Q_EMIT message(LogView::Level::Info, tr("%1: connected again").arg(where));
        Q_EMIT statusMessage(tr("%1: connected again").arg(where), 5000);
        Q_EMIT connectionChanged();
    });
    m_session->start();
}

void RemoteRunOpener::drop()
{
    if (!m_session)
        return;
    // Steering goes back to the run's own control before the remote one is deleted under it.
    if (isSteering())
        m_loops->setOverride(nullptr);
    delete m_session;
    m_session = nullptr;
}

void RemoteRunOpener::openDialog()
{
    RemoteRunDialog dialog(m_window);
    if (dialog.exec() == QDialog::Accepted)
        Q_EMIT openRequested(dialog.remoteRun());
}

QString RemoteRunOpener::addressFor(const QString &dir) const
{
    return m_session && dir == m_session->localDir() ? m_session->run().url() : dir;
}

QString RemoteRunOpener::displayNameFor(const QString &dir) const
{
    return m_session && dir == m_session->localDir() ? m_session->run().display() : QString();
}

bool RemoteRunOpener::isSteering() const
{
    return m_session && m_loops->control() == m_session->control();
}

QString RemoteRunOpener::loopSummary() const
{
    if (!m_session)
        return {};
    if (!m_session->isConnected())
        return tr("on %1, not reachable now").arg(m_session->run().host());
    return m_session->control()->writer().isEmpty() ? QString() : m_session->control()->writer();
}

} // namespace ak
