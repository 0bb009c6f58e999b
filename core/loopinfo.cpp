#include "loopinfo.h"

#include "atomicfile.h"
#include "jsonfield.h"

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
    info.pid = jsonfield::integer(j, "pid", info.pid);
    info.maxExperiments = int(jsonfield::integer(j, "max_experiments", info.maxExperiments));
    info.started = QDateTime::fromString(jsonfield::text(j, "started"), Qt::ISODate);
    info.deadline = QDateTime::fromString(jsonfield::text(j, "deadline"), Qt::ISODate);
    info.agent = jsonfield::text(j, "agent");
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
