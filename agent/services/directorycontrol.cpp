#include "services/directorycontrol.h"

#include "services/backgroundjob.h"

#include "requestqueue.h"
#include "runlock.h"
#include "runsteering.h"
#include "runstore.h"

#include <QDir>

namespace ak {

DirectoryControl::DirectoryControl(const QString &runDir, QObject *parent)
    : LoopControl(parent)
    , m_runDir(QDir(runDir).absolutePath())
{
    m_poll.setInterval(WriterPollMs);
    connect(&m_poll, &QTimer::timeout, this, &DirectoryControl::refresh);
    refresh();
}

DirectoryControl::~DirectoryControl() = default;

QString DirectoryControl::description() const
{
    return m_writerPid != 0 ? QStringLiteral("the run directory (its loop runs in pid %1)").arg(m_writerPid)
                            : QStringLiteral("the run directory (no loop in this window)");
}

void DirectoryControl::noLoop(const QString &action)
{
    Q_EMIT actionFailed(action,
        QStringLiteral("no loop runs in this window; steering the run directory can only "
                       "pin, skip, revert, accept, reject, change the move-on rules and "
                       "switch review mode"));
}

void DirectoryControl::start()
{
    noLoop(QStringLiteral("start"));
}
void DirectoryControl::pause()
{
    noLoop(QStringLiteral("pause"));
}
void DirectoryControl::resume()
{
    noLoop(QStringLiteral("resume"));
}
void DirectoryControl::stop()
{
    noLoop(QStringLiteral("stop"));
}

void DirectoryControl::pin(const QString &kernel)
{
    enqueue({ QStringLiteral("pin"), kernelAction(SteerRequest::Action::Pin, kernel, 0) });
}
void DirectoryControl::unpin(const QString &kernel)
{
    enqueue({ QStringLiteral("unpin"), kernelAction(SteerRequest::Action::Unpin, kernel, 0) });
}
void DirectoryControl::skip(const QString &kernel)
{
    enqueue({ QStringLiteral("skip"), kernelAction(SteerRequest::Action::Skip, kernel, 0) });
}
void DirectoryControl::revert(const QString &kernel, int experimentId)
{
    enqueue({ QStringLiteral("revert"), kernelAction(SteerRequest::Action::Revert, kernel, experimentId) });
}
void DirectoryControl::accept(int experimentId)
{
    enqueue(
        { QStringLiteral("accept"), kernelAction(SteerRequest::Action::Accept, QString(), experimentId) });
}
void DirectoryControl::reject(int experimentId)
{
    enqueue(
        { QStringLiteral("reject"), kernelAction(SteerRequest::Action::Reject, QString(), experimentId) });
}
void DirectoryControl::setMoveOnRules(const MoveOnRules &rules)
{
    enqueue({ QStringLiteral("setMoveOnRules"), SteerRequest::moveOn(rules, RunStore::author()) });
}
void DirectoryControl::setReviewMode(bool on)
{
    enqueue({ QStringLiteral("setReviewMode"), SteerRequest::review(on) });
}

SteerRequest DirectoryControl::kernelAction(
    SteerRequest::Action action, const QString &kernel, int experiment)
{
    // The window asks for no reason; the empty one keeps its queued files as they have always been.
    return SteerRequest::kernelAction(action, kernel, experiment).withReason(QString());
}

void DirectoryControl::enqueue(const Request &request)
{
    m_queue.push_back(request);
    if (m_queue.size() == 1)
        runNext();
}

void DirectoryControl::runNext()
{
    if (m_queue.empty()) {
        Q_EMIT idle();
        if (m_refreshWhenIdle) {
            m_refreshWhenIdle = false;
            refresh();
        }
        return;
    }
    const Request request = m_queue.front();
    runInBackground(
        this, [dir = m_runDir, request] { return apply(dir, request); },
        [this, request](const Outcome &outcome) {
            m_queue.pop_front();
            for (const QString &m : outcome.messages)
                Q_EMIT message(m);
            if (outcome.ok && outcome.writer != m_writerPid) {
                m_writerPid = outcome.writer;
                m_writerKnown = true;
                Q_EMIT writerChanged(m_writerPid);
                Q_EMIT capabilitiesChanged(); // description() changed
            }
            if (!outcome.queuedAs.isEmpty())
                m_awaited.emplace(outcome.queuedAs, request.name);
            if (outcome.ok)
                Q_EMIT actionFinished(request.name, outcome.text);
            else
                Q_EMIT actionFailed(request.name, outcome.text);
            runNext();
        });
}

DirectoryControl::Outcome DirectoryControl::apply(const QString &runDir, const Request &r)
{
    Outcome o;
    const RunSteering::Outcome steered = RunSteering::steer(runDir, r.request);
    for (const QString &note : steered.repairNotes)
        o.messages << QStringLiteral("repair: ") + note;
    o.ok = steered.ok();
    o.writer = steered.writer;
    if (steered.kind == RunSteering::Outcome::Kind::Queued)
        o.queuedAs = steered.request;
    if (steered.kind != RunSteering::Outcome::Kind::Applied) {
        o.text = steered.message;
        return o;
    }
    o.text = r.request.appliedText(steered.created, steered.state->config.moveOn);
    return o;
}

void DirectoryControl::refresh()
{
    checkOutcomes();
    // While a request holds the lock the probe would find this very process; ask again afterwards.
    if (!m_queue.empty()) {
        m_refreshWhenIdle = true;
        return;
    }
    if (m_probing)
        return;
    m_probing = true;
    runInBackground(
        this, [dir = m_runDir] { return probeWriter(dir); },
        [this](qint64 pid) {
            m_probing = false;
            const bool changed = !m_writerKnown || pid != m_writerPid;
            m_writerPid = pid;
            m_writerKnown = true;
            // Poll only while someone writes: that is when the answer is expected to change on its own.
            if (pid != 0 && !m_poll.isActive())
                m_poll.start();
            else if (pid == 0)
                m_poll.stop();
            if (changed) {
                Q_EMIT writerChanged(pid);
                Q_EMIT capabilitiesChanged(); // description() changed
            }
        });
}

void DirectoryControl::checkOutcomes()
{
    if (m_awaited.empty() || m_checking)
        return;
    m_checking = true;
    QStringList files;
    for (const auto &entry : m_awaited)
        files << entry.first;
    runInBackground(
        this,
        [dir = m_runDir, files] {
            std::vector<Reported> found;
            for (const QString &file : files) {
                Reported r { file, {} };
                if (RequestQueue::outcome(dir, file, &r.outcome, true))
                    found.push_back(r);
            }
            return found;
        },
        [this](const std::vector<Reported> &found) {
            m_checking = false;
            for (const Reported &r : found) {
                const auto it = m_awaited.find(r.file);
                if (it == m_awaited.end())
                    continue;
                const QString action = it->second;
                m_awaited.erase(it);
                if (r.outcome.ok)
                    Q_EMIT actionFinished(
                        action, QStringLiteral("applied by the run's writer: ") + r.outcome.text);
                else
                    Q_EMIT actionFailed(
                        action, QStringLiteral("refused by the run's writer: ") + r.outcome.text);
            }
        });
}

qint64 DirectoryControl::probeWriter(const QString &runDir)
{
    const qint64 pid = RunLock::holderPid(runDir);
    if (pid == 0)
        return 0;
    // The lock file may be left by a process that is gone: only a lock we cannot take is a writer.
    RunLock probe(runDir);
    if (probe.acquire(nullptr)) {
        probe.release();
        return 0;
    }
    return pid;
}

} // namespace ak
