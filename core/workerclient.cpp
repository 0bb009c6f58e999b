#include "workerclient.h"
#include "corelog.h"

#include "enumnames.h"
#include "jsonfield.h"
#include "secrets.h"

#include "pythonscripts.h"

#include <QThread>

#include <csignal>
#include <sys/types.h>
#include <unistd.h>
#ifdef Q_OS_LINUX
#include <sys/prctl.h>
#endif

namespace ak {

namespace {
constexpr int kStderrTailBytes = 16 * 1024;
constexpr int kProtocol = 1;
constexpr int kWaitSliceMs = 50; // blocking mode re-checks deadlines and cancel this often
} // namespace

namespace {
// The request's end as logs and errors name it.
constexpr EnumToken<WorkerReply::Status> kWorkerStatusNames[] = {
    { WorkerReply::Status::Ok, "ok" },
    { WorkerReply::Status::Error, "error" },
    { WorkerReply::Status::Timeout, "timeout" },
    { WorkerReply::Status::Crash, "crash" },
    { WorkerReply::Status::Cancelled, "cancelled" },
    { WorkerReply::Status::Unavailable, "unavailable" },
};
} // namespace

QString WorkerReply::statusName(Status s)
{
    return tokenOf(kWorkerStatusNames, s);
}

WorkerClient::WorkerClient(QObject *parent)
    : QObject(parent)
    , m_env(secrets::scrubbed(QProcessEnvironment::systemEnvironment()))
{
    qRegisterMetaType<ak::WorkerReply>();
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        checkDeadlines();
        armTimer();
    });
}

WorkerClient::~WorkerClient()
{
    if (m_process)
        retire(QStringLiteral("client destroyed"));
    reapRetired();
}

void WorkerClient::setPython(const QString &python)
{
    m_python = python;
}
void WorkerClient::setLauncher(const WorkerLauncher &launcher)
{
    m_launcher = launcher;
}
void WorkerClient::setScriptDir(const QString &dir)
{
    m_scriptDir = dir;
}
// A worker never sees an API key: kernels run below it, and what it prints reaches logs and prompts.
void WorkerClient::setEnvironment(const QProcessEnvironment &env)
{
    m_env = secrets::scrubbed(env);
}
void WorkerClient::setStartTimeoutMs(int ms)
{
    m_startTimeoutMs = ms;
}

bool WorkerClient::isRunning() const
{
    return m_state == State::Ready;
}
qint64 WorkerClient::workerPid() const
{
    return m_workerPid;
}
QString WorkerClient::workerPython() const
{
    return m_workerPython;
}

bool WorkerClient::start(QString *error)
{
    if (m_state == State::Ready)
        return true;
    // A ping is a start-up that also proves the protocol works end to end.
    const WorkerReply r = request(QStringLiteral("ping"), nlohmann::json::object(), 10000);
    if (!r.ok() && error)
        *error = r.error + (r.stderrTail.isEmpty() ? QString() : QStringLiteral("\n") + r.stderrTail);
    return r.ok();
}

void WorkerClient::stop()
{
    failQueued(WorkerReply::Status::Cancelled, QStringLiteral("the worker was stopped"));
    if (m_hasCurrent) {
        WorkerReply r;
        r.status = WorkerReply::Status::Cancelled;
        r.error = QStringLiteral("the worker was stopped");
        finish(r);
    }
    if (m_process)
        retire(QStringLiteral("stopped"));
    reapRetired();
}

WorkerReply WorkerClient::request(
    const QString &op, const nlohmann::json &args, int timeoutMs, const ProgressFn &progress)
{
    reapRetired();
    const int id = enqueue(op, args, timeoutMs, true, progress);
    waitUntil([this, id] { return m_blockingDone.count(id) > 0; });
    if (!m_blockingDone.count(id)) { // defensive: every path files a reply
        m_blockingDone[id].status = WorkerReply::Status::Crash;
        m_blockingDone[id].error = QStringLiteral("the request was lost");
    }
    WorkerReply reply = std::move(m_blockingDone[id]);
    m_blockingDone.erase(id);
    if (m_process && !m_hasCurrent
        && (reply.status == WorkerReply::Status::Ok || reply.status == WorkerReply::Status::Error)) {
        // The worker wrote its stderr before the reply, but the two pipes are read independently: one
        // poll pass collects what is already there, so the tail is complete for this request.
        m_process->waitForReadyRead(0);
        reply.stderrTail = QString::fromUtf8(m_stderrTail);
    }
    reapRetired();
    return reply;
}

int WorkerClient::submit(const QString &op, const nlohmann::json &args, int timeoutMs)
{
    reapRetired();
    return enqueue(op, args, timeoutMs, false, ProgressFn());
}

void WorkerClient::cancel()
{
    m_cancel = true;
    if (QThread::currentThread() == thread())
        handleCancel();
    else
        QMetaObject::invokeMethod(
            this, [this] { handleCancel(); }, Qt::QueuedConnection);
}

int WorkerClient::enqueue(
    const QString &op, const nlohmann::json &args, int timeoutMs, bool blocking, const ProgressFn &fn)
{
    if (!m_hasCurrent && m_queue.empty())
        m_cancel = false; // a cancel that arrived while idle must not hit this new request
    Pending p;
    p.id = m_nextId++;
    p.op = op;
    p.args = args.is_null() ? nlohmann::json::object() : args;
    p.timeoutMs = timeoutMs;
    p.blocking = blocking;
    p.progress = fn;
    m_queue.push_back(std::move(p));
    const int id = m_queue.back().id;
    pump();
    return id;
}

void WorkerClient::pump()
{
    if (m_hasCurrent || m_queue.empty())
        return;
    if (m_state == State::Stopped)
        launch();
    if (m_state != State::Ready)
        return;
    m_current = std::move(m_queue.front());
    m_queue.pop_front();
    m_hasCurrent = true;
    send(m_current);
}

QStringList WorkerClient::localCommand()
{
    QString dir = m_scriptDir;
    QString error;
    if (dir.isEmpty())
        dir = PythonScripts::directory(&error);
    if (dir.isEmpty()) {
        failQueued(WorkerReply::Status::Unavailable,
            QStringLiteral("cannot extract the worker's Python files: ") + error);
        return {};
    }
    return { m_python, QStringLiteral("-u"), dir + QStringLiteral("/akworker.py") };
}

void WorkerClient::launch()
{
    if (m_python.isEmpty()) {
        failQueued(WorkerReply::Status::Unavailable,
            QStringLiteral("no Python interpreter was chosen for the worker"));
        return;
    }
    QStringList command;
    if (m_launcher.isLocal()) {
        command = localCommand();
        if (command.isEmpty())
            return;
    } else {
        // The bootstrap fetches the worker's files through the channel when the far side lacks them.
        command = m_launcher.command({ m_python, QStringLiteral("-u"), QStringLiteral("-c"),
            PythonScripts::bootstrapSource(), PythonScripts::contentHash(),
            QString::fromLatin1(WorkerLauncher::forwardedEnvironment(m_env)) });
    }

    m_process = new QProcess(this);
    m_process->setProcessEnvironment(m_launcher.isLocal() ? m_env : m_launcher.localEnvironment(m_env));
    m_process->setProgram(command.takeFirst());
    m_process->setArguments(command);
    // Own process group, so a kill also reaches what the worker spawned (compile workers, ssh's
    // children); and on Linux the worker dies with the thread that started it instead of lingering.
    m_process->setChildProcessModifier([] {
        ::setsid();
#ifdef Q_OS_LINUX
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    });
    connect(m_process, &QProcess::readyReadStandardOutput, this, &WorkerClient::readStdout);
    connect(m_process, &QProcess::readyReadStandardError, this, &WorkerClient::readStderr);
    connect(m_process, &QProcess::finished, this, &WorkerClient::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, &WorkerClient::onError);
    m_state = State::Starting;
    m_startDeadline = QDeadlineTimer(m_startTimeoutMs);
    m_stderrTail.clear();
    ++m_starts;
    armTimer();
    qCDebug(lcCore) << "starting worker" << m_process->program() << m_process->arguments();
    m_process->start();
}

void WorkerClient::send(Pending &p)
{
    m_stderrTail.clear();
    p.elapsed.start();
    p.deadline = QDeadlineTimer(qMax(1, p.timeoutMs));
    const nlohmann::json line = { { "id", p.id }, { "op", p.op.toStdString() }, { "args", p.args } };
    m_process->write(QByteArray::fromStdString(line.dump()) + '\n');
    armTimer();
}

void WorkerClient::finish(WorkerReply reply)
{
    if (!m_hasCurrent)
        return;
    Pending done = std::move(m_current);
    m_hasCurrent = false;
    reply.seconds = done.elapsed.isValid() ? double(done.elapsed.nsecsElapsed()) / 1e9 : 0.0;
    if (reply.stderrTail.isEmpty())
        reply.stderrTail = QString::fromUtf8(m_stderrTail);
    if (done.blocking)
        m_blockingDone[done.id] = reply;
    Q_EMIT replied(done.id, reply);
    armTimer();
}

void WorkerClient::failQueued(WorkerReply::Status status, const QString &error)
{
    std::deque<Pending> queue;
    queue.swap(m_queue);
    for (Pending &p : queue) {
        WorkerReply r;
        r.status = status;
        r.error = error;
        r.stderrTail = QString::fromUtf8(m_stderrTail);
        if (p.blocking)
            m_blockingDone[p.id] = r;
        Q_EMIT replied(p.id, r);
    }
}

void WorkerClient::retire(const QString &reason, bool drain)
{
    if (!m_process)
        return;
    QProcess *p = m_process;
    m_process = nullptr;
    m_state = State::Stopped;
    m_workerPid = 0;
    disconnect(p, nullptr, this, nullptr);
    if (p->state() != QProcess::NotRunning) {
        const qint64 pid = p->processId();
        if (pid > 0)
            ::kill(-pid_t(pid), SIGKILL); // the whole group (see setsid above)
        p->kill();
        if (drain) {
            // Collect what it wrote up to its death (what a hung kernel printed is the best clue).
            p->waitForFinished(2000);
        }
    }
    const QByteArray rest = p->readAllStandardError();
    if (!rest.isEmpty()) {
        m_stderrTail += rest;
        if (m_stderrTail.size() > kStderrTailBytes)
            m_stderrTail = m_stderrTail.right(kStderrTailBytes);
    }
    m_retired.push_back(p);
    qCDebug(lcCore) << "worker retired:" << reason;
    armTimer();
}

void WorkerClient::reapRetired()
{
    std::vector<QProcess *> retired;
    retired.swap(m_retired);
    for (QProcess *p : retired) {
        if (p->state() != QProcess::NotRunning)
            p->waitForFinished(2000);
        delete p;
    }
}

void WorkerClient::checkDeadlines()
{
    if (m_cancel)
        handleCancel();
    if (m_state == State::Starting && m_startDeadline.hasExpired()) {
        retire(QStringLiteral("start-up timeout"));
        failQueued(WorkerReply::Status::Unavailable,
            QStringLiteral("the worker did not start within %1 s").arg(m_startTimeoutMs / 1000.0));
    }
    if (m_hasCurrent && m_current.deadline.hasExpired()) {
        retire(QStringLiteral("timeout"), true);
        WorkerReply r;
        r.status = WorkerReply::Status::Timeout;
        r.error = QStringLiteral("'%1' did not finish within %2 s; the worker was killed")
                      .arg(m_current.op)
                      .arg(m_current.timeoutMs / 1000.0);
        finish(r);
        pump();
    }
}

void WorkerClient::handleCancel()
{
    if (!m_cancel.exchange(false))
        return;
    if (!m_hasCurrent && m_queue.empty())
        return;
    retire(QStringLiteral("cancelled"), true);
    failQueued(WorkerReply::Status::Cancelled, QStringLiteral("cancelled"));
    if (m_hasCurrent) {
        WorkerReply r;
        r.status = WorkerReply::Status::Cancelled;
        r.error = QStringLiteral("cancelled");
        finish(r);
    }
}

void WorkerClient::armTimer()
{
    // Async mode only: blocking waits check the deadlines themselves.
    qint64 ms = -1;
    if (m_state == State::Starting)
        ms = m_startDeadline.remainingTime();
    if (m_hasCurrent) {
        const qint64 left = m_current.deadline.remainingTime();
        ms = ms < 0 ? left : qMin(ms, left);
    }
    if (ms < 0)
        m_timer.stop();
    else
        m_timer.start(int(qMin<qint64>(ms + 1, 1 << 30)));
}

void WorkerClient::waitUntil(const std::function<bool()> &done)
{
    while (!done()) {
        checkDeadlines();
        pump();
        if (done())
            break;
        if (m_process) {
            // Emits readyRead / finished on this stack; returns at once if the process is not running.
            if (!m_process->waitForReadyRead(kWaitSliceMs) && m_process
                && m_process->state() == QProcess::NotRunning)
                QThread::msleep(kWaitSliceMs);
        } else if (!m_hasCurrent && m_queue.empty()) {
            break; // nothing left that could complete: a failure path already filed the reply
        } else {
            QThread::msleep(kWaitSliceMs);
        }
        reapRetired();
    }
}

void WorkerClient::readStdout()
{
    while (m_process && m_process->canReadLine())
        handleLine(m_process->readLine().trimmed());
}

void WorkerClient::readStderr()
{
    if (!m_process)
        return;
    const QByteArray data = m_process->readAllStandardError();
    m_stderrTail += data;
    if (m_stderrTail.size() > kStderrTailBytes)
        m_stderrTail = m_stderrTail.right(kStderrTailBytes);
}

void WorkerClient::handleLine(const QByteArray &line)
{
    if (line.isEmpty())
        return;
    const nlohmann::json msg
        = nlohmann::json::parse(line.constData(), line.constData() + line.size(), nullptr, false);
    if (msg.is_discarded() || !msg.is_object()) {
        // Not ours (a launcher's banner, say): keep it with the free text rather than fail.
        m_stderrTail += "[stdout] " + line + '\n';
        return;
    }
    const QString event = jsonfield::text(msg, "event");
    if (event == QLatin1String("bundle") && m_state == State::Starting) {
        sendBundle();
        return;
    }
    if (event == QLatin1String("ready")) {
        const qint64 protocol = jsonfield::integer(msg, "protocol", 0);
        m_workerPid = jsonfield::integer(msg, "pid", 0);
        m_workerPython = jsonfield::text(msg, "python");
        if (protocol != kProtocol) {
            retire(QStringLiteral("protocol mismatch"));
            failQueued(WorkerReply::Status::Unavailable,
                QStringLiteral("the worker speaks protocol %1, this build needs %2")
                    .arg(protocol)
                    .arg(kProtocol));
            return;
        }
        m_state = State::Ready;
        armTimer();
        pump();
        return;
    }
    const auto idIt = msg.find("id");
    if (!m_hasCurrent || idIt == msg.end() || !idIt->is_number_integer()
        || idIt->get<int>() != m_current.id) {
        if (!jsonfield::boolean(msg, "ok", true)) // an error about a request we did not make
            m_stderrTail += "[worker] " + line + '\n';
        return;
    }
    if (event == QLatin1String("progress")) {
        const QString message = jsonfield::text(msg, "message");
        const double fraction = jsonfield::number(msg, "fraction", -1.0);
        if (m_current.progress)
            m_current.progress(message, fraction);
        Q_EMIT progress(m_current.id, message, fraction);
        return;
    }
    WorkerReply r;
    const bool fatal = jsonfield::boolean(msg, "fatal", false);
    if (jsonfield::boolean(msg, "ok", false)) {
        r.status = fatal ? WorkerReply::Status::Crash : WorkerReply::Status::Ok;
        const auto result = msg.find("result");
        r.result = result != msg.end() ? *result : nlohmann::json::object();
        if (fatal)
            r.error
                = QStringLiteral("the worker reported a CUDA fault: ") + jsonfield::text(msg, "fatal_reason");
    } else {
        r.status = fatal ? WorkerReply::Status::Crash : WorkerReply::Status::Error;
        r.error = jsonfield::text(msg, "error");
        r.traceback = jsonfield::text(msg, "traceback");
    }
    r.fatal = fatal;
    readStderr();
    finish(r);
    if (fatal)
        retire(QStringLiteral("CUDA fault"));
    pump();
}

void WorkerClient::sendBundle()
{
    const QByteArray bundle = PythonScripts::bundle();
    qCDebug(lcCore) << "sending the worker's files through the launcher:" << bundle.size() << "bytes";
    m_process->write(QByteArray::number(bundle.size()) + '\n');
    m_process->write(bundle);
}

void WorkerClient::onFinished(int exitCode, QProcess::ExitStatus status)
{
    readStdout(); // a reply written just before exiting still counts
    readStderr();
    if (!m_process)
        return;
    const QString reason = m_launcher.describeExit(exitCode, status == QProcess::CrashExit);
    const bool wasStarting = m_state == State::Starting;
    retire(reason);
    if (m_hasCurrent) {
        WorkerReply r;
        r.status = WorkerReply::Status::Crash;
        r.error = reason;
        finish(r);
    }
    if (wasStarting)
        failQueued(WorkerReply::Status::Unavailable,
            QStringLiteral("the worker exited during start-up (%1): %2")
                .arg(reason, QString::fromUtf8(m_stderrTail).trimmed()));
}

void WorkerClient::onError(QProcess::ProcessError error)
{
    if (error != QProcess::FailedToStart || !m_process)
        return;
    const QString reason = QStringLiteral("cannot start the worker '%1': %2")
                               .arg(m_process->program(), m_process->errorString());
    retire(reason);
    failQueued(WorkerReply::Status::Unavailable, reason);
}

} // namespace ak
