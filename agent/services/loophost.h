#pragma once

#include "loopcontrol.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>

namespace ak {

class DirectoryControl;

// Which LoopControl steers the run the window shows. By default a DirectoryControl for the open run:
// pin, skip, revert, accept and reject work whoever runs the loop (another process, or nobody).
// startLoop() swaps in a loop made by the factory (ak::LocalLoop, wired in app/gui/main.cpp); once
// that loop has stopped it is dropped and the DirectoryControl steers again. An override
// (MainWindow::setLoopControl: tests, a remote loop) wins over both.
class LoopHost : public QObject
{
    Q_OBJECT
public:
    // Makes an in-process loop on runDir, parented to `parent`; nullptr when it cannot.
    using Factory = std::function<LoopControl *(const QString &runDir, QObject *parent)>;

    explicit LoopHost(QObject *parent = nullptr);
    ~LoopHost() override;

    void setFactory(Factory factory);
    bool hasFactory() const { return bool(m_factory); }

    // A different run: a DirectoryControl for it. A loop still running on the previous run is asked
    // to stop and deleted once it has (deleting a running loop would block on its threads).
    void setRunDir(const QString &runDir);
    QString runDir() const { return m_runDir; }
    // Not owned; nullptr goes back to the default.
    void setOverride(LoopControl *control);

    LoopControl *control() const { return m_current; }
    DirectoryControl *directoryControl() const { return m_directory; }
    LoopControl *loop() const { return m_loop; }

    // Why startLoop() is not possible now (no run, no factory, another process writes the run);
    // empty when it is.
    QString whyCannotStart() const;
    void startLoop();
    // Asks the DirectoryControl whether another process writes the run (after a reload).
    void refresh();

Q_SIGNALS:
    void controlChanged(ak::LoopControl *control);
    // The in-process loop on runDir has stopped: on its own (all kernels done, budget spent) or
    // because it was asked to stop (it went through Stopping).
    void loopEnded(const QString &runDir, bool onItsOwn);
    void startAvailabilityChanged();
    void message(const QString &text);

private:
    void updateCurrent();
    void makeDirectoryControl();
    void onLoopState();
    void dropLoop();
    void retire(LoopControl *loop);

    QString m_runDir;
    Factory m_factory;
    DirectoryControl *m_directory = nullptr; // owned
    LoopControl *m_loop = nullptr; // owned, made by the factory
    bool m_loopStarted = false; // m_loop has been Running/Paused at least once
    bool m_stopAsked = false; // m_loop went through Stopping
    QPointer<LoopControl> m_override;
    QPointer<LoopControl> m_current;
};

} // namespace ak
