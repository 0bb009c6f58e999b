#pragma once

#include "remoterun.h"

#include <QObject>

namespace ak {

class RemoteControl;
class RunMirror;

// A run on another machine as the window holds it: its local mirror (RunMirror, kept up to date over
// ssh) and its steering (RemoteControl, the remote autokernel-cli over ssh). The window opens
// localDir() like any run once ready() arrives and installs control() as its LoopControl; the data
// still flows one way — the remote writer records, the mirror copies, the loader reads.
class RemoteSession : public QObject
{
    Q_OBJECT
public:
    explicit RemoteSession(const RemoteRun &run, QObject *parent = nullptr);
    ~RemoteSession() override;

    const RemoteRun &run() const { return m_run; }
    QString localDir() const;
    RemoteControl *control() const { return m_control; }
    RunMirror *mirror() const { return m_mirror; }
    bool isReady() const { return m_ready; }
    bool isConnected() const { return m_connected; }

    void start();

Q_SIGNALS:
    void ready(const QString &localDir); // the first copy is complete: open it
    void changed(); // a later pass brought something new
    // A pass failed: the first one means the run cannot be opened (yet; the mirror keeps trying);
    // later ones that the copy is stale until the connection comes back (reported once per outage).
    void problem(const QString &error, bool beforeReady);
    void reconnected();

private:
    RemoteRun m_run;
    RunMirror *m_mirror;
    RemoteControl *m_control;
    bool m_ready = false;
    bool m_connected = true;
};

} // namespace ak
