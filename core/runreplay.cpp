#include "runreplay.h"

#include "runloader.h"

#include <QDir>
#include <QFile>

#include <algorithm>

namespace ak {

namespace {

bool endsFrame(const LogEntry &e)
{
    return e.type == LogEntry::Type::Experiment && e.action != QLatin1String("begin");
}

} // namespace

std::shared_ptr<RunReplay> RunReplay::open(const QString &dir, QString *error)
{
    const QDir d(dir);
    QFile runJson(d.filePath(QStringLiteral("run.json")));
    if (!runJson.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("%1: not a run directory (no run.json)").arg(dir);
        return nullptr;
    }
    RunSnapshot profiled;
    profiled.runDir = d.absolutePath();
    profiled.runJsonOnDisk = runJson.readAll();
    QString why;
    if (!RunLoader::applyRunJson(profiled, profiled.runJsonOnDisk, &why))
        profiled.warnings << why;
    const ExperimentLog::ReadResult log = ExperimentLog::read(d.filePath(ExperimentLog::fileName()));
    profiled.warnings << log.errors;
    RunLoader::readSideFiles(profiled);
    return std::make_shared<RunReplay>(profiled, log.entries);
}

RunReplay::RunReplay(const RunSnapshot &profiled, QVector<LogEntry> entries)
    : m_profiled(profiled)
    , m_entries(std::move(entries))
{
    // Frame 0 is the profiled run: the kernels the profile added, each of whose lines the creation
    // interleaves with its baseline's, come first; every later line keeps its place.
    int firstWork = 0;
    while (firstWork < m_entries.size()
        && !(m_entries[firstWork].type == LogEntry::Type::Experiment
            && m_entries[firstWork].action != QLatin1String("baseline")))
        ++firstWork;
    const auto isAdd = [](const LogEntry &e) {
        return e.type == LogEntry::Type::Kernel && e.action == QLatin1String("add");
    };
    if (!m_entries.isEmpty())
        m_start = m_entries.first().time;
    std::stable_partition(m_entries.begin(), m_entries.begin() + firstWork, isAdd);
    int first = 0;
    while (first < m_entries.size() && m_entries[first].type != LogEntry::Type::Experiment)
        ++first;
    m_frameEnd.push_back(first);
    for (int i = first; i < m_entries.size(); ++i)
        if (endsFrame(m_entries[i]))
            m_frameEnd.push_back(i + 1);
    m_cursor = m_profiled;
    m_cursor.verification.reset();
    m_cursor.bestCommit.clear();
    applyThrough(m_cursor, 0, m_frameEnd[0]);
}

void RunReplay::applyThrough(RunSnapshot &s, int fromEntry, int toEntry) const
{
    for (int i = fromEntry; i < toEntry; ++i)
        RunLoader::apply(s, m_entries[i]);
    RunLoader::finish(s);
}

QDateTime RunReplay::frameTime(int frame) const
{
    frame = std::clamp(frame, 0, frameCount());
    return frame == 0 ? m_start : m_entries[m_frameEnd[frame] - 1].time;
}

int RunReplay::frameExperiment(int frame) const
{
    if (frame <= 0 || frame > frameCount())
        return 0;
    return m_entries[m_frameEnd[frame] - 1].experiment.id;
}

double RunReplay::secondsInto(int frame) const
{
    const QDateTime start = frameTime(0);
    const QDateTime at = frameTime(frame);
    return start.isValid() && at.isValid() ? std::max<qint64>(0, start.msecsTo(at)) / 1000.0 : 0.0;
}

RunSnapshotPtr RunReplay::snapshotAt(int frame)
{
    frame = std::clamp(frame, 0, frameCount());
    if (frame < m_cursorFrame) {
        m_cursor = m_profiled;
        m_cursor.verification.reset();
        m_cursor.bestCommit.clear();
        m_cursorFrame = 0;
        applyThrough(m_cursor, 0, m_frameEnd[0]);
    }
    applyThrough(m_cursor, m_frameEnd[m_cursorFrame], m_frameEnd[frame]);
    m_cursorFrame = frame;
    auto s = std::make_shared<RunSnapshot>(m_cursor);
    if (frame == frameCount()) {
        s->verification = m_profiled.verification;
        s->bestCommit = m_profiled.bestCommit;
    }
    return s;
}

} // namespace ak
