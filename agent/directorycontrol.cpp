#include "directorycontrol.h"

#include "backgroundjob.h"

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
    if (steered.kind != RunSteering::Outcome::Kind::Applied) {
        o.text = steered.message;
        return o;
    }
    const QString k = r.request.kernel();
    const int id = r.request.experiment();
    switch (r.request.action()) {
    case SteerRequest::Action::Pin:
        o.text
            = QStringLiteral("%1 pinned: its current best is locked; the loop leaves it alone until unpinned")
                  .arg(k);
        break;
    case SteerRequest::Action::Unpin:
        o.text = QStringLiteral("%1 unpinned: the loop may work on it again").arg(k);
        break;
    case SteerRequest::Action::Skip:
        o.text = QStringLiteral("%1 skipped: the loop moves on to the next kernel").arg(k);
        break;
    case SteerRequest::Action::Revert:
        o.text = QStringLiteral("%1: experiment %2 restored as experiment %3 (commit %4)")
                     .arg(k)
                     .arg(id)
                     .arg(steered.created.id)
                     .arg(steered.created.commit.left(12));
        break;
    case SteerRequest::Action::Accept:
        o.text = QStringLiteral("experiment %1 accepted").arg(id);
        break;
    case SteerRequest::Action::Reject:
        o.text = QStringLiteral("experiment %1 rejected").arg(id);
        break;
    case SteerRequest::Action::MoveOn: {
        o.text = QStringLiteral("move-on rules set: %1; the loop uses them from its next experiment")
                     .arg(steered.state->config.moveOn.summary());
        break;
    }
    case SteerRequest::Action::Review:
        o.text = r.request.on()
            ? QStringLiteral("review mode on: a would-be keep waits as pending until accepted or rejected")
            : QStringLiteral("review mode off: the loop keeps improvements itself");
        break;
    case SteerRequest::Action::Unskip:
    case SteerRequest::Action::Verification:
        o.text = QStringLiteral("%1: done").arg(r.request.actionName()); // the window does not send these
        break;
    }
    return o;
}

void DirectoryControl::refresh()
{
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
