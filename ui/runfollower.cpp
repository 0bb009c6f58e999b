#include "runfollower.h"

#include "runloader.h"
#include "runwatcher.h"
#include "services/backgroundjob.h"

#include <QCoreApplication>

#include <utility>
#include <vector>

namespace ak {

namespace {

constexpr int ReloadDebounceMs = 250;

} // namespace

RunFollower::RunFollower(QObject *parent)
    : QObject(parent)
    , m_loader(&RunLoader::load)
{
    m_reloadTimer.setSingleShot(true);
    m_reloadTimer.setInterval(ReloadDebounceMs);
    connect(&m_reloadTimer, &QTimer::timeout, this, &RunFollower::reloadDue);
}

RunFollower::~RunFollower() = default;

void RunFollower::setLoader(Loader loader)
{
    m_loader = std::move(loader);
    m_defaultLoader = false;
}

void RunFollower::open(const QString &dir)
{
    startLoad(dir, false, RunSnapshotPtr());
}

void RunFollower::reload(const QString &dir, const RunSnapshotPtr &shown)
{
    // One reload at a time: while experiments land faster than a load takes, starting a new load on
    // every change would supersede each one before it is shown, and the table would never update.
    if (m_reloadInFlight) {
        m_reloadAgain = true;
        return;
    }
    // A reload of the run on screen reads only what was appended to its log since (a 10k-experiment
    // log is ~250 ms of parsing; its tail a few ms), unless a test injected its own loader.
    startLoad(dir, true, m_defaultLoader && shown && shown->runDir == dir ? shown : RunSnapshotPtr());
}

void RunFollower::scheduleReload()
{
    // Not restarted while it runs: a steady stream of changes still reloads every ReloadDebounceMs
    // (a restarting debounce waited for the stream to stop, which a running loop never does).
    if (!m_reloadTimer.isActive())
        m_reloadTimer.start();
}

void RunFollower::startLoad(const QString &dir, bool isReload, const RunSnapshotPtr &previous)
{
    const quint64 generation = ++m_generation;
    if (isReload)
        m_reloadInFlight = true;
    else
        m_reloadAgain = false; // another run: what changed in the old one no longer matters
    runInBackground(
        this,
        [loader = m_loader, dir, previous] {
            QString error;
            RunSnapshotPtr snapshot = previous ? RunLoader::reload(previous, &error) : loader(dir, &error);
            if (!snapshot && error.isEmpty())
                error = tr("not a run directory");
            return std::make_pair(snapshot, error);
        },
        [this, generation, dir, isReload](const std::pair<RunSnapshotPtr, QString> &result) {
            if (isReload) {
                m_reloadInFlight = false;
                if (m_reloadAgain) { // changes arrived while this load ran: read them once more
                    m_reloadAgain = false;
                    scheduleReload();
                }
            }
            if (generation != m_generation)
                return; // a newer open or reload superseded this one
            const auto &[snapshot, error] = result;
            if (!snapshot) {
                Q_EMIT failed(dir, error);
                return;
            }
            if (!isReload)
                watch(dir);
            // Before loaded: whatever its slots do (open another run, close the window), the work of
            // this load is done by then.
            tailLoopLog(snapshot->runDir, !isReload);
            Q_EMIT loaded(dir, snapshot, isReload);
        });
}

void RunFollower::tailLoopLog(const QString &dir, bool opened)
{
    if (opened) {
        // Where the file ends when the run is shown (a stat and 64 bytes, so here rather than in a job
        // that would end after lines written meanwhile): the history of earlier loops is not news.
        ++m_loopLogGeneration;
        m_loopLog = LoopLogFile::endOf(dir);
        m_loopLogReading = m_loopLogAgain = false; // a read of the previous run's file is dropped
        return;
    }
    if (m_loopLogReading) {
        m_loopLogAgain = true; // what this reload brought is read once the read in flight ends
        return;
    }
    m_loopLogReading = true;
    using Result = std::pair<LoopLogFile::Position, std::vector<LoopLogFile::Line>>;
    runInBackground(
        this,
        [dir, pos = m_loopLog]() mutable {
            std::vector<LoopLogFile::Line> lines = LoopLogFile::readNew(dir, &pos);
            return Result(pos, lines);
        },
        [this, dir, generation = m_loopLogGeneration](const Result &result) {
            if (generation != m_loopLogGeneration)
                return;
            m_loopLogReading = false;
            m_loopLog = result.first;
            const qint64 self = QCoreApplication::applicationPid();
            for (const LoopLogFile::Line &line : result.second) {
                if (line.pid == self)
                    continue; // this window's own loop: its messages are in the log already
                Q_EMIT loopLine(
                    line.pid != 0 ? tr("loop (pid %1): %2").arg(line.pid).arg(line.text) : line.text);
            }
            if (m_loopLogAgain) {
                m_loopLogAgain = false;
                tailLoopLog(dir, false);
            }
        });
}

void RunFollower::watch(const QString &dir)
{
    // Another process (the loop, the CLI) writes the run; reload when its files change.
    delete m_watcher;
    m_watcher = new RunWatcher(dir, this);
    connect(m_watcher, &RunWatcher::changed, this, &RunFollower::scheduleReload);
}

} // namespace ak
