#include "loopinfo.h"

#include "atomicfile.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>

using nlohmann::json;

namespace ak {

QString LoopInfo::path(const QString &runDir)
{
    return QDir(runDir).filePath(QStringLiteral(".git/autokernel-loop.json"));
}

bool LoopInfo::write(const QString &runDir, QString *error) const
{
    json j { { "pid", pid }, { "started", started.toUTC().toString(Qt::ISODate).toStdString() },
        { "agent", agent.toStdString() } };
    if (deadline.isValid())
        j["deadline"] = deadline.toUTC().toString(Qt::ISODate).toStdString();
    if (maxExperiments > 0)
        j["max_experiments"] = maxExperiments;
    return AtomicFile::write(path(runDir), QByteArray::fromStdString(j.dump(2)), error);
}

void LoopInfo::remove(const QString &runDir)
{
    QFile::remove(path(runDir));
}

std::optional<LoopInfo> LoopInfo::read(const QString &runDir)
{
    QFile f(path(runDir));
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QByteArray data = f.readAll();
    const json j = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (!j.is_object())
        return std::nullopt;
    LoopInfo info;
    auto text = [&j](const char *key) {
        return j.contains(key) && j[key].is_string() ? QString::fromStdString(j[key].get<std::string>())
                                                     : QString();
    };
    if (j.contains("pid") && j["pid"].is_number_integer())
        info.pid = j["pid"].get<qint64>();
    if (j.contains("max_experiments") && j["max_experiments"].is_number_integer())
        info.maxExperiments = j["max_experiments"].get<int>();
    info.started = QDateTime::fromString(text("started"), Qt::ISODate);
    info.deadline = QDateTime::fromString(text("deadline"), Qt::ISODate);
    info.agent = text("agent");
    return info;
}

QString LoopInfo::budgetLeftText(const QDateTime &now) const
{
    if (!deadline.isValid())
        return QString();
    const qint64 secs = now.secsTo(deadline);
    if (secs <= 0)
        return QStringLiteral("budget spent");
    const qint64 minutes = (secs + 59) / 60;
    if (minutes < 60)
        return QStringLiteral("%1 min left").arg(minutes);
    return QStringLiteral("%1 h %2 min left").arg(minutes / 60).arg(minutes % 60);
}

} // namespace ak
