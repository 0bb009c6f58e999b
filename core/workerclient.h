#pragma once

#include "workerlauncher.h"
#include "workerreply.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <vector>

namespace ak {

// Owns one warm Python worker (core/python/akworker.py run by the user's interpreter) and speaks the
// line-delimited JSON protocol of docs/worker.md with it. Requests run one at a time, in order.
//
// Two ways to use it, on the thread the object lives in (it is thread-affine, like the QProcess it owns):
//  - request(): blocking, for the experiment loop's QThread and the CLI; needs no event loop.
//  - submit(): returns at once; progress() and replied() arrive through the event loop (GUI).
// A timeout, a crash, an unexpected exit or a reported CUDA fault kills the worker (its whole process
// group); the next request starts a fresh one, so one bad kernel never poisons the next experiment.
class WorkerClient : public QObject
{
    Q_OBJECT
public:
    using ProgressFn = std::function<void(const QString &message, double fraction)>;

    explicit WorkerClient(QObject *parent = nullptr);
    ~WorkerClient() override;

    // Configuration; takes effect at the next worker start.
    void setPython(const QString &python); // interpreter (see PythonLocator)
    // A launcher (`ssh gpu1`, `srun ...`) starts the worker elsewhere; its files travel over the
    // channel (see WorkerLauncher). The interpreter is then a name on that machine ("python3").
    void setLauncher(const WorkerLauncher &launcher);
    const WorkerLauncher &launcher() const { return m_launcher; }
    void setScriptDir(const QString &dir); // holds akworker.py; default PythonScripts::directory()
    void setEnvironment(
        const QProcessEnvironment &env); // default: this process's; secrets are always removed
    void setStartTimeoutMs(int ms); // default 60 s (ssh, slow file systems)

    // Starts the worker now and waits for its ready line (otherwise the first request starts it).
    bool start(QString *error = nullptr);
    void stop(); // closes the worker (kills it if busy); queued requests are cancelled
    bool isRunning() const; // started and ready
    qint64 workerPid() const; // pid the worker reported (the interpreter, not the launcher)
    QString workerPython() const; // sys.executable the worker reported
    int startCount() const { return m_starts; } // processes started so far: > 1 means it was restarted

    // Blocking: sends the request and waits up to timeoutMs (plus the start-up, if a worker must be
    // started first). `progress` is called for each progress event, on this thread.
    WorkerReply request(const QString &op, const nlohmann::json &args, int timeoutMs,
        const ProgressFn &progress = ProgressFn());

    // Asynchronous: queues the request and returns its id; replied(id, ...) follows.
    int submit(const QString &op, const nlohmann::json &args, int timeoutMs);

    // Thread-safe. Ends the request in flight and every queued one with status Cancelled and kills the
    // worker. From another thread it takes effect within ~50 ms (blocking mode) or at the next event.
    void cancel();

Q_SIGNALS:
    void progress(int id, const QString &message, double fraction);
    void replied(int id, const ak::WorkerReply &reply);

private:
    struct Pending
    {
        int id = 0;
        QString op;
        nlohmann::json args;
        int timeoutMs = 0;
        bool blocking = false;
        ProgressFn progress;
        QDeadlineTimer deadline;
        QElapsedTimer elapsed;
    };
    enum class State { Stopped, Starting, Ready };

    int enqueue(
        const QString &op, const nlohmann::json &args, int timeoutMs, bool blocking, const ProgressFn &fn);
    void pump();
    void launch();
    QStringList localCommand();
    void sendBundle();
    void send(Pending &p);
    void finish(WorkerReply reply);
    void failQueued(WorkerReply::Status status, const QString &error);
    void retire(const QString &reason, bool drain = false); // drain: wait for its death, keep its stderr
    void reapRetired();
    void checkDeadlines();
    void handleCancel();
    void armTimer();
    void waitUntil(const std::function<bool()> &done);
    void readStdout();
    void readStderr();
    void handleLine(const QByteArray &line);
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);

    QString m_python;
    WorkerLauncher m_launcher;
    QString m_scriptDir;
    QProcessEnvironment m_env;
    int m_startTimeoutMs = 60000;

    QProcess *m_process = nullptr;
    std::vector<QProcess *> m_retired; // killed, deleted at a point where no QProcess signal is on the stack
    State m_state = State::Stopped;
    QDeadlineTimer m_startDeadline;
    qint64 m_workerPid = 0;
    QString m_workerPython;
    int m_starts = 0;
    int m_nextId = 1;
    std::deque<Pending> m_queue;
    bool m_hasCurrent = false;
    Pending m_current;
    std::map<int, WorkerReply> m_blockingDone;
    QByteArray m_stderrTail;
    QTimer m_timer;
    std::atomic<bool> m_cancel { false };
};

} // namespace ak
