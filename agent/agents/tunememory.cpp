#include "agents/tunememory.h"

#include "atomicfile.h"
#include "jsonfield.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QStandardPaths>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ak {

namespace {

using nlohmann::json;

json readFile()
{
    if (TuneMemory::path().isEmpty())
        return json::object();
    QFile f(TuneMemory::path());
    if (!f.open(QIODevice::ReadOnly))
        return json::object();
    const QByteArray data = f.readAll();
    json j = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    // A damaged memory is only a lost head start: start again rather than stop a run.
    return jsonfield::array(j, "entries") ? j : json::object();
}

TuneMemory::Entry entryOf(const json &e)
{
    TuneMemory::Entry out;
    out.device = jsonfield::text(e, "device");
    out.opType = jsonfield::text(e, "op");
    out.dtype = jsonfield::text(e, "dtype");
    out.shapes = jsonfield::text(e, "shapes");
    out.runDir = jsonfield::text(e, "run");
    out.when = QDateTime::fromString(jsonfield::text(e, "when"), Qt::ISODate);
    out.speedup = jsonfield::number(e, "speedup", 0.0);
    if (const json *config = jsonfield::object(e, "config"))
        for (auto it = config->begin(); it != config->end(); ++it)
            if (it->is_number())
                out.config.insert(QString::fromStdString(it.key()), it->get<double>());
    return out;
}

json jsonOf(const TuneMemory::Entry &e)
{
    json config = json::object();
    for (auto it = e.config.constBegin(); it != e.config.constEnd(); ++it)
        config[it.key().toStdString()] = it.value();
    return { { "device", e.device.toStdString() }, { "op", e.opType.toStdString() },
        { "dtype", e.dtype.toStdString() }, { "shapes", e.shapes.toStdString() }, { "config", config },
        { "speedup", e.speedup }, { "when", e.when.toString(Qt::ISODate).toStdString() },
        { "run", e.runDir.toStdString() } };
}

bool sameKey(const TuneMemory::Entry &a, const TuneMemory::Entry &b)
{
    return a.device == b.device && a.opType == b.opType && a.dtype == b.dtype && a.shapes == b.shapes;
}

} // namespace

QString TuneMemory::path()
{
    const QString forced = qEnvironmentVariable("AUTOKERNEL_TUNE_MEMORY");
    if (forced == QLatin1String("none"))
        return QString();
    if (!forced.isEmpty())
        return forced;
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation))
        .filePath(QStringLiteral("autokernel/tune-memory.json"));
}

QVector<TuneMemory::Entry> TuneMemory::all()
{
    QVector<Entry> out;
    const json file = readFile();
    if (const json *entries = jsonfield::array(file, "entries"))
        for (const json &e : *entries)
            if (e.is_object())
                out.append(entryOf(e));
    return out;
}

bool TuneMemory::remember(const Entry &entry, QString *error)
{
    const QString file = path();
    if (file.isEmpty())
        return true; // turned off
    if (!QDir().mkpath(QFileInfo(file).absolutePath())) {
        if (error)
            *error = QStringLiteral("cannot create %1").arg(QFileInfo(file).absolutePath());
        return false;
    }
    QLockFile lock(file + QStringLiteral(".lock"));
    if (!lock.tryLock(5000)) {
        if (error)
            *error = QStringLiteral("%1 is locked by another process").arg(file);
        return false;
    }
    QVector<Entry> entries = all();
    bool replaced = false;
    for (Entry &e : entries) {
        if (sameKey(e, entry)) {
            replaced = true;
            if (entry.speedup > e.speedup)
                e = entry;
        }
    }
    if (!replaced)
        entries.append(entry);
    std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.when > b.when; });
    if (entries.size() > MaxEntries)
        entries.resize(MaxEntries);
    json list = json::array();
    for (const Entry &e : entries)
        list.push_back(jsonOf(e));
    const json out = { { "format", 1 }, { "entries", list } };
    return AtomicFile::write(file, QByteArray::fromStdString(out.dump(1)) + '\n', error);
}

QVector<TuneMemory::Entry> TuneMemory::recall(const QString &device, const QString &opType,
    const QString &dtype, const QString &shapes, const QString &excludeRun)
{
    return select(all(), device, opType, dtype, shapes, excludeRun);
}

QVector<TuneMemory::Entry> TuneMemory::select(const QVector<Entry> &entries, const QString &device,
    const QString &opType, const QString &dtype, const QString &shapes, const QString &excludeRun)
{
    QVector<Entry> out;
    for (const Entry &e : entries)
        if (e.device == device && e.opType == opType && e.dtype == dtype && e.runDir != excludeRun
            && !e.config.isEmpty())
            out.append(e);
    std::stable_sort(out.begin(), out.end(), [&shapes](const Entry &a, const Entry &b) {
        const bool sa = a.shapes == shapes, sb = b.shapes == shapes;
        return sa != sb ? sa : a.speedup > b.speedup;
    });
    return out;
}

bool TuneMemory::clear(QString *error)
{
    if (path().isEmpty())
        return true;
    QFile f(path());
    if (f.exists() && !f.remove()) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path(), f.errorString());
        return false;
    }
    return true;
}

} // namespace ak
