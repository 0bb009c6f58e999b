#include "directorycontrol.h"

#include "backgroundjob.h"

#include "runlock.h"
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
    Q_EMIT actionFailed(action, QStringLiteral("no loop runs in this window; steering the run directory can only "
                                               "pin, skip, revert, accept, reject, change the move-on rules and "
                                               "switch review mode"));
}

void DirectoryControl::start() { noLoop(QStringLiteral("start")); }
void DirectoryControl::pause() { noLoop(QStringLiteral("pause")); }
void DirectoryControl::resume() { noLoop(QStringLiteral("resume")); }
void DirectoryControl::stop() { noLoop(QStringLiteral("stop")); }

void DirectoryControl::pin(const QString &kernel) { enqueue({QStringLiteral("pin"), kernel, 0, {}}); }
void DirectoryControl::unpin(const QString &kernel) { enqueue({QStringLiteral("unpin"), kernel, 0, {}}); }
void DirectoryControl::skip(const QString &kernel) { enqueue({QStringLiteral("skip"), kernel, 0, {}}); }
void DirectoryControl::revert(const QString &kernel, int experimentId) { enqueue({QStringLiteral("revert"), kernel, experimentId, {}}); }
void DirectoryControl::accept(int experimentId) { enqueue({QStringLiteral("accept"), QString(), experimentId, {}}); }
void DirectoryControl::reject(int experimentId) { enqueue({QStringLiteral("reject"), QString(), experimentId, {}}); }
void DirectoryControl::setMoveOnRules(const MoveOnRules &rules) { enqueue({QStringLiteral("setMoveOnRules"), QString(), 0, rules}); }
void DirectoryControl::setReviewMode(bool on) { enqueue({QStringLiteral("setReviewMode"), QString(), 0, {}, on}); }

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
    runInBackground(this, [dir = m_runDir, request] { return apply(dir, request); },
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
                            Q_EMIT actionFinished(request.action, outcome.text);
                        else
                            Q_EMIT actionFailed(request.action, outcome.text);
                        runNext();
                    });
}

DirectoryControl::Outcome DirectoryControl::apply(const QString &runDir, const Request &r)
{
    Outcome o;
    QString error;
    auto store = RunStore::open(runDir, &error);
    if (!store) {
        // Someone else writes the run (its loop): leave the request where that writer picks it up.
        const qint64 holder = RunLock::holderPid(runDir);
        if (holder == 0) {
            o.text = error;
            return o;
        }
        nlohmann::json request{{"action", r.action.toStdString()}, {"kernel", r.kernel.toStdString()},
                               {"experiment", r.experiment}, {"reason", ""}};
        if (r.action == QLatin1String("setMoveOnRules"))
            request = {{"action", "move_on"}, {"value", nlohmann::json::parse(r.rules.toJson().toStdString())},
                       {"by", RunStore::author().toStdString()}};
        else if (r.action == QLatin1String("setReviewMode"))
            request = {{"action", "review"}, {"value", r.on}};
        if (!RunStore::queueRequest(runDir, request, &error)) {
            o.text = error;
            return o;
        }
        o.ok = true;
        o.writer = holder;
        o.text = QStringLiteral("queued for the writer of the run (pid %1), which applies it between experiments").arg(holder);
        return o;
    }
    for (const QString &note : store->repairNotes())
        o.messages << QStringLiteral("repair: ") + note;
    const QString &k = r.kernel;
    if (r.action == QLatin1String("pin")) {
        o.ok = store->pin(k, QString(), &error);
        o.text = QStringLiteral("%1 pinned: its current best is locked; the loop leaves it alone until unpinned").arg(k);
    } else if (r.action == QLatin1String("unpin")) {
        o.ok = store->unpin(k, &error);
        o.text = QStringLiteral("%1 unpinned: the loop may work on it again").arg(k);
    } else if (r.action == QLatin1String("skip")) {
        o.ok = store->skip(k, QString(), &error);
        o.text = QStringLiteral("%1 skipped: the loop moves on to the next kernel").arg(k);
    } else if (r.action == QLatin1String("revert")) {
        const Experiment e = store->revert(k, r.experiment, &error);
        o.ok = e.id != 0;
        o.text = QStringLiteral("%1: experiment %2 restored as experiment %3 (commit %4)")
                     .arg(k).arg(r.experiment).arg(e.id).arg(e.commit.left(12));
    } else if (r.action == QLatin1String("accept")) {
        o.ok = store->accept(r.experiment, &error);
        o.text = QStringLiteral("experiment %1 accepted").arg(r.experiment);
    } else if (r.action == QLatin1String("reject")) {
        o.ok = store->reject(r.experiment, QString(), &error);
        o.text = QStringLiteral("experiment %1 rejected").arg(r.experiment);
    } else if (r.action == QLatin1String("setMoveOnRules")) {
        o.ok = store->setMoveOnRules(r.rules, &error);
        o.text = QStringLiteral("move-on rules set: %1; the loop uses them from its next experiment").arg(r.rules.summary());
    } else if (r.action == QLatin1String("setReviewMode")) {
        // Already so: nothing to log.
        o.ok = store->state().reviewMode == r.on || store->setReviewMode(r.on, &error);
        o.text = r.on ? QStringLiteral("review mode on: a would-be keep waits as pending until accepted or rejected")
                      : QStringLiteral("review mode off: the loop keeps improvements itself");
    } else {
        error = QStringLiteral("unknown action '%1'").arg(r.action);
    }
    if (!o.ok)
        o.text = error;
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
    runInBackground(this, [dir = m_runDir] { return probeWriter(dir); }, [this](qint64 pid) {
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
