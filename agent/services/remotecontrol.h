#pragma once

#include "loopcontrol.h"
#include "remoterun.h"

#include <QProcess>
#include <QStringList>

#include <deque>

namespace ak {

// Steers a run on another machine (RemoteRun) the way `autokernel-cli pin|skip|…` steers a local
// one, by running those very commands there over ssh: the remote CLI applies the request as the
// run's writer, or queues it for the loop that holds the run's lock, which applies it between
// experiments. The window then sees the effect through its mirror (RunMirror). Requests go one at a
// time in the order made; the outcome arrives as actionFinished / actionFailed with the remote CLI's
// own words. The loop itself is started and stopped on that machine: no start/stop here.
class RemoteControl : public LoopControl
{
    Q_OBJECT
public:
    // `mirrorDir`: the local mirror, read for the remote lock (who writes the run).
    RemoteControl(const RemoteRun &run, const QString &mirrorDir, QObject *parent = nullptr);
    ~RemoteControl() override;

    Capabilities capabilities() const override
    {
        return CanSteerKernels | CanRevert | CanReview | CanEditRules | CanSetReviewMode;
    }
    State state() const override { return State::Stopped; }
    QString description() const override;

    // "on gpu1 (pid 4242)" when the mirrored lock names a writer, else empty.
    QString writer() const;
    int pendingRequests() const { return int(m_queue.size()); }

    void start() override;
    void pause() override;
    void resume() override;
    void stop() override;
    void pin(const QString &kernel) override;
    void unpin(const QString &kernel) override;
    void skip(const QString &kernel) override;
    void revert(const QString &kernel, int experimentId) override;
    void accept(int experimentId) override;
    void reject(int experimentId) override;
    void setMoveOnRules(const MoveOnRules &rules) override;
    void setReviewMode(bool on) override;

    // The arguments of autokernel-cli (after the program) for a LoopControl call on this run.
    QStringList cliArgs(const QString &action, const QStringList &args) const;

Q_SIGNALS:
    void idle(); // the last pending request has finished

private:
    struct Request
    {
        QString name; // the LoopControl call
        QStringList args; // autokernel-cli's arguments
    };

    void enqueue(const QString &name, const QStringList &args);
    void runNext();
    void finished(int exitCode, QProcess::ExitStatus status);
    void notHere(const QString &action);

    RemoteRun m_run;
    QString m_mirror;
    std::deque<Request> m_queue; // front = the request running
    QProcess m_process;
};

} // namespace ak
