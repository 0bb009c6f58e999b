#pragma once

#include "remoterun.h"
#include "widgets/logview.h"

#include <QObject>
#include <QString>

class QWidget;

namespace ak {

class LoopHost;
class RemoteSession;

// A run on another machine as the window follows it: File ▸ Open Remote Run…, ssh:// addresses typed
// in or chosen from Open Recent, and the one RemoteSession (mirror and steering) of the run shown. The
// session's remote control steers the run through the window's LoopHost once the first copy is in.
// Progress and problems leave through signals, so that the window alone decides where messages go
// (its log, status bar and empty state), as with ExampleRunStarter.
class RemoteRunOpener : public QObject
{
    Q_OBJECT
public:
    // window: the dialog's parent. loops: where the remote control is installed; not owned.
    RemoteRunOpener(QWidget *window, LoopHost *loops);

    // `address` (ssh://…) with the commands File ▸ Open Remote Run… remembered; invalid, with *error
    // set, when the address does not parse.
    static RemoteRun parse(const QString &address, QString *error);
    // Drops the session before and starts mirroring `run`; ready follows once the first copy is in.
    void open(const RemoteRun &run);
    // The window opens something else: the session goes, and its control stops steering.
    void drop();
    // File ▸ Open Remote Run…: RemoteRunDialog; what was chosen leaves through openRequested, so that
    // the window leaves replays and example runs behind first.
    void openDialog();

    // What Open Recent remembers for `dir`: the ssh:// address for the mirror, else `dir` itself.
    QString addressFor(const QString &dir) const;
    // The run's host:path when `dir` is the mirror, else empty: the mirror's folder name means
    // nothing to the user.
    QString displayNameFor(const QString &dir) const;
    // The session's control steers the shown run; loopSummary() then says where the loop runs.
    bool isSteering() const;
    QString loopSummary() const;

Q_SIGNALS:
    void openRequested(const ak::RemoteRun &run);
    void ready(const QString &localDir); // the first copy is in, the control installed: open it
    void changed(); // a later copy brought something new
    void message(ak::LogView::Level level, const QString &text); // for the log
    void statusMessage(const QString &text, int timeoutMs); // 0: until replaced
    // For the empty state: what is being copied; only while no run shows.
    void explanation(const QString &title, const QString &text);
    // The first copy failed (the mirror keeps trying); `next` says what the user can do.
    void openFailed(const QString &address, const QString &error, const QString &next);
    void connectionChanged(); // lost or back: where the loop runs reads differently

private:
    QWidget *m_window;
    LoopHost *m_loops;
    RemoteSession *m_session = nullptr; // owned
};

} // namespace ak
