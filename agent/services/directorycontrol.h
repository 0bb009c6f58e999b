#pragma once

#include "loopcontrol.h"
#include "requestqueue.h"
#include "runstore.h"
#include "steerrequest.h"

#include <QTimer>

#include <deque>
#include <map>

namespace ak {

// Steers a run through its directory, whoever runs the loop (another process, or nobody): what
// `autokernel-cli pin|skip|revert|accept|reject|rules|review` does, through the same
// RunSteering::steer: when nobody writes the run the request is applied directly and the store is
// closed again; when another process holds the run lock it is queued for that writer, which applies
// it between experiments. Either way the outcome arrives as actionFinished / actionFailed; a queued
// request gets a second one when the writer has applied or refused it.
//
// Opening the store takes the lock, repairs and may touch git, so requests run off the GUI thread,
// one at a time in the order they were made (two at once would find each other's lock and queue).
// It has no loop of its own: no start/stop; state() is always Stopped.
class DirectoryControl : public LoopControl
{
    Q_OBJECT
public:
    // While another process writes the run, how often writerPid() is checked again (it may stop).
    static constexpr int WriterPollMs = 3000;

    explicit DirectoryControl(const QString &runDir, QObject *parent = nullptr);
    ~DirectoryControl() override;

    QString runDir() const { return m_runDir; }

    Capabilities capabilities() const override
    {
        return CanSteerKernels | CanRevert | CanReview | CanEditRules | CanSetReviewMode;
    }
    State state() const override { return State::Stopped; }
    QString description() const override;

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
    // SteerRequest::moveOn with all of `rules`, applied or queued for the run's writer.
    void setMoveOnRules(const MoveOnRules &rules) override;
    // SteerRequest::review, applied (nothing to do when already so) or queued for the run's writer.
    void setReviewMode(bool on) override;

    // pid of the live process that holds the run's lock (its loop), 0 when nobody writes the run.
    // Known after the first refresh (the constructor starts one); a stale lock counts as no writer.
    qint64 writerPid() const { return m_writerPid; }
    bool isWriterKnown() const { return m_writerKnown; }
    // Checks the lock again, off the GUI thread; writerChanged follows if the answer changed.
    void refresh();
    // Requests waiting or being applied.
    int pendingRequests() const { return int(m_queue.size()); }
    // Requests queued for another process's loop whose outcome has not been reported yet. Their
    // outcome (applied or refused, RequestQueue::outcome) arrives as a second actionFinished /
    // actionFailed once the writer has dealt with them; refresh() looks for it.
    int awaitedRequests() const { return int(m_awaited.size()); }

Q_SIGNALS:
    void writerChanged(qint64 pid);
    void idle(); // the last pending request has finished

private:
    struct Request
    {
        QString
            name; // the LoopControl call, for actionFinished: "pin", ..., "setMoveOnRules", "setReviewMode"
        SteerRequest request;
    };
    struct Outcome
    {
        bool ok = false;
        QString text; // detail (ok) or error
        QStringList messages; // repair notes for the log
        qint64 writer = 0; // the lock holder the request was queued for
        QString queuedAs; // the queued file's name, for the writer's outcome
    };
    struct Reported
    {
        QString file; // the queued file's name
        RequestQueue::Outcome outcome;
    };

    void enqueue(const Request &request);
    void runNext();
    void noLoop(const QString &action);
    static SteerRequest kernelAction(SteerRequest::Action action, const QString &kernel, int experiment);
    static Outcome apply(const QString &runDir, const Request &request);
    static qint64 probeWriter(const QString &runDir);
    void checkOutcomes();

    QString m_runDir;
    std::deque<Request> m_queue; // front = the request being applied
    qint64 m_writerPid = 0;
    bool m_writerKnown = false;
    bool m_probing = false;
    bool m_refreshWhenIdle = false;
    bool m_checking = false;
    std::map<QString, QString> m_awaited; // queued file name -> the LoopControl call, for its outcome
    QTimer m_poll;
};

} // namespace ak
