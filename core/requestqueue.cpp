#include "requestqueue.h"

#include "atomicfile.h"
#include "errorout.h"
#include "jsonfield.h"
#include "runstore.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <atomic>
#include <optional>

using nlohmann::json;

namespace ak {

QString RequestQueue::dir(const QString &runDir)
{
    return QDir(runDir).filePath(QStringLiteral(".git/autokernel-requests"));
}

QString RequestQueue::doneDir(const QString &runDir)
{
    return QDir(dir(runDir)).filePath(QStringLiteral("done"));
}

bool RequestQueue::queue(const QString &runDir, const json &request, QString *error, QString *name)
{
    if (!request.is_object() || !request.contains("action"))
        return fail(error, QStringLiteral("a steering request needs an \"action\""));
    if (const QString why = RunStore::readOnlyReason(runDir); !why.isEmpty())
        return fail(error, QStringLiteral("%1 is read-only: %2").arg(runDir, why));
    static std::atomic<int> counter { 0 };
    const QString file = QStringLiteral("%1-%2-%3.json")
                             .arg(QDateTime::currentMSecsSinceEpoch(), 15, 10, QLatin1Char('0'))
                             .arg(QCoreApplication::applicationPid())
                             .arg(counter++);
    if (name)
        *name = file;
    return AtomicFile::write(
        QDir(dir(runDir)).filePath(file), QByteArray::fromStdString(request.dump()), error);
}

bool RequestQueue::outcome(const QString &runDir, const QString &name, Outcome *out, bool remove)
{
    const QString file = QDir(doneDir(runDir)).filePath(name);
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QByteArray data = f.readAll();
    f.close();
    const json record = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    Outcome o;
    if (const std::optional<bool> ok = jsonfield::strict::boolean(record, "ok")) {
        o.ok = *ok;
        o.text = jsonfield::text(record, "text");
    } else {
        o.text = QStringLiteral("the writer's record of the request is not readable");
    }
    if (remove)
        QFile::remove(file);
    if (out)
        *out = o;
    return true;
}

void RequestQueue::recordOutcome(const QString &runDir, const QString &name, bool ok, const QString &text)
{
    const json record { { "ok", ok }, { "text", text.toStdString() } };
    AtomicFile::write(
        QDir(doneDir(runDir)).filePath(name), QByteArray::fromStdString(record.dump()), nullptr);
}

void RequestQueue::pruneOutcomes(const QString &runDir)
{
    QDir done(doneDir(runDir));
    if (!done.exists())
        return;
    const QDateTime cutoff = QDateTime::currentDateTimeUtc().addSecs(-OutcomeKeepSecs);
    for (const QFileInfo &info : done.entryInfoList({ QStringLiteral("*.json") }, QDir::Files))
        if (info.lastModified().toUTC() < cutoff)
            QFile::remove(info.absoluteFilePath());
}

} // namespace ak
