#include "runrecording.h"

#include "atomicfile.h"
#include "errorout.h"
#include "gitrepo.h"
#include "jsonfield.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>

#include <functional>

using nlohmann::json;

namespace ak {

namespace {

// The run's files outside git or read from the work tree; experiments.jsonl is the index.
const char *const kRunFiles[]
    = { "run.json", "profile.json", "verification.json", "experiments.jsonl", "results.tsv" };
// Refs a run has (docs/run-format.md); '*' matches '/' in libgit2's globs.
const char *const kRefGlobs[] = { "refs/heads/*", "refs/experiments/*", "refs/replies/*" };

bool isUtf8Text(const QByteArray &data)
{
    return !data.contains('\0') && QString::fromUtf8(data).toUtf8() == data;
}

std::string str(const QString &s)
{
    return s.toStdString();
}

QString qstr(const json &j)
{
    return QString::fromStdString(j.get<std::string>());
}

// A string field of `object`, or an error naming it.
bool field(const json &object, const char *name, const QString &where, QString *out, QString *error)
{
    const auto it = object.find(name);
    if (it == object.end() || !it->is_string())
        return fail(
            error, QStringLiteral("%1: \"%2\" is missing or not a string").arg(where, QLatin1String(name)));
    *out = qstr(*it);
    return true;
}

// The "recording" object's description; a missing or wrongly typed field is left empty (jsonfield
// never throws: a recording's summary is not worth refusing it over).
RunRecording::Info infoOf(const json &j)
{
    RunRecording::Info info;
    const json *meta = jsonfield::object(j, "recording");
    if (!meta)
        return info;
    info.device = jsonfield::text(*meta, "device");
    info.model = jsonfield::text(*meta, "model");
    info.note = jsonfield::text(*meta, "note");
    info.recorded = QDateTime::fromString(jsonfield::text(*meta, "recorded"), Qt::ISODate);
    info.experiments = int(jsonfield::integer(*meta, "experiments", 0));
    return info;
}

bool isRecordingFormat(const json &j)
{
    return jsonfield::text(j, "format") == QLatin1String(RunRecording::Format);
}

} // namespace

QString RunRecording::Info::summary() const
{
    QString s = QStringLiteral("a recording of %1 run")
                    .arg(model.isEmpty() ? QStringLiteral("a")
                                         : QStringLiteral("the %1").arg(QFileInfo(model).completeBaseName()));
    if (!device.isEmpty())
        s += QStringLiteral(" on %1").arg(device);
    if (recorded.isValid())
        s += QStringLiteral(" (%1)").arg(recorded.date().toString(Qt::ISODate));
    return s;
}

bool RunRecording::write(const QString &runDir, const QString &outFile, const QString &note, QString *error)
{
    const QDir dir(runDir);
    QFile runJson(dir.filePath(QStringLiteral("run.json")));
    if (!runJson.open(QIODevice::ReadOnly))
        return fail(error, QStringLiteral("%1 is not a run directory (no run.json)").arg(runDir));
    QString gitError;
    auto repo = GitRepo::open(runDir, &gitError);
    if (!repo)
        return fail(error, QStringLiteral("%1: %2").arg(runDir, gitError));

    json out;
    json files = json::object();
    for (const char *name : kRunFiles) {
        QFile f(dir.filePath(QLatin1String(name)));
        if (!f.exists())
            continue;
        if (!f.open(QIODevice::ReadOnly))
            return fail(error, QStringLiteral("%1: %2").arg(f.fileName(), f.errorString()));
        const QByteArray data = f.readAll();
        if (!isUtf8Text(data))
            return fail(
                error, QStringLiteral("%1 is not UTF-8 text; a recording holds text only").arg(f.fileName()));
        files[name] = data.toStdString();
    }

    json refs = json::object();
    QStringList roots;
    json blobs = json::object();
    auto addBlob = [&](const QString &id, const QString &what) {
        if (blobs.contains(str(id)))
            return true;
        QString readError;
        const QByteArray data = repo->readBlobById(id, &readError);
        if (!readError.isEmpty())
            return fail(error, QStringLiteral("%1: %2").arg(what, readError));
        if (!isUtf8Text(data))
            return fail(error,
                QStringLiteral("%1 (blob %2) is not UTF-8 text; a recording holds text only").arg(what, id));
        blobs[str(id)] = data.toStdString();
        return true;
    };
    for (const char *glob : kRefGlobs) {
        for (const QString &ref : repo->listRefs(QLatin1String(glob))) {
            const QString target = repo->resolveRef(ref);
            refs[str(ref)] = str(target);
            if (ref.startsWith(QLatin1String(GitRepo::BlobRefPrefix))) {
                if (!addBlob(target, ref))
                    return false;
            } else {
                roots << target;
            }
        }
    }

    // Every commit reachable from the refs, parents before children (restore writes them in order).
    json commits = json::array();
    QSet<QString> seen;
    std::function<bool(const QString &)> visit = [&](const QString &id) {
        if (seen.contains(id))
            return true;
        seen.insert(id);
        const QStringList parents = repo->parentsOf(id);
        for (const QString &p : parents)
            if (!visit(p))
                return false;
        const QMap<QString, QString> tree = repo->filesOf(id);
        json treeJson = json::object();
        for (auto it = tree.constBegin(); it != tree.constEnd(); ++it) {
            if (!addBlob(it.value(), QStringLiteral("%1 at commit %2").arg(it.key(), id.left(8))))
                return false;
            treeJson[str(it.key())] = str(it.value());
        }
        json parentIds = json::array();
        for (const QString &p : parents)
            parentIds.push_back(str(p));
        const QDateTime when = repo->timeOf(id);
        commits.push_back({ { "id", str(id) }, { "parents", parentIds }, { "tree", treeJson },
            { "message", str(repo->messageOf(id)) }, { "time", when.toSecsSinceEpoch() },
            { "offset_minutes", when.offsetFromUtc() / 60 } });
        return true;
    };
    for (const QString &root : roots)
        if (!visit(root))
            return false;

    json meta = json::object();
    try {
        const json run = json::parse(runJson.readAll().toStdString());
        meta["model"] = str(jsonfield::text(run, "model"));
        if (const json *device = jsonfield::object(run, "device"))
            meta["device"] = str(jsonfield::text(*device, "name"));
    } catch (const json::exception &) {
        // The recording still holds run.json as it is; only the summary lacks model and device.
    }
    int experiments = 0;
    if (files.contains("experiments.jsonl"))
        experiments = int(std::count(files["experiments.jsonl"].get_ref<const std::string &>().begin(),
            files["experiments.jsonl"].get_ref<const std::string &>().end(), '\n'));
    meta["experiments"] = experiments;
    meta["recorded"] = str(QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    meta["note"] = str(note);
    out["format"] = Format;
    out["version"] = Version;
    out["recording"] = meta;
    out["files"] = files;
    out["refs"] = refs;
    out["head"] = str(repo->resolveRef(QStringLiteral("refs/heads/best")).isEmpty()
            ? QString()
            : QStringLiteral("refs/heads/best"));
    out["commits"] = commits;
    out["blobs"] = blobs;
    return AtomicFile::write(outFile, QByteArray::fromStdString(out.dump(1)) + '\n', error);
}

bool RunRecording::peek(const QByteArray &recording, Info *info, QString *error)
{
    try {
        const json j = json::parse(recording.toStdString());
        if (!isRecordingFormat(j))
            return fail(error,
                QStringLiteral("not an AutoKernel recording (\"format\" is not \"%1\")")
                    .arg(QLatin1String(Format)));
        if (info)
            *info = infoOf(j);
        return true;
    } catch (const json::exception &e) {
        return fail(error, QStringLiteral("not JSON: %1").arg(QString::fromUtf8(e.what())));
    }
}

bool RunRecording::isRecording(const QString &runDir, Info *info)
{
    QFile f(QDir(runDir).filePath(QLatin1String(MarkerFile)));
    if (!f.open(QIODevice::ReadOnly))
        return false;
    try {
        const json j = json::parse(f.readAll().toStdString());
        if (info)
            *info = infoOf(j);
        return true;
    } catch (const json::exception &) {
        return true; // the marker exists: a recording, whose description is unreadable
    }
}

bool RunRecording::restore(
    const QByteArray &recording, const QString &sourceName, const QString &runDir, QString *error)
{
    json j;
    try {
        j = json::parse(recording.toStdString());
    } catch (const json::exception &e) {
        return fail(error, QStringLiteral("%1: not JSON: %2").arg(sourceName, QString::fromUtf8(e.what())));
    }
    if (!isRecordingFormat(j))
        return fail(error,
            QStringLiteral("%1: not an AutoKernel recording (\"format\" is not \"%2\")")
                .arg(sourceName, QLatin1String(Format)));
    if (jsonfield::integer(j, "version", 0) != Version)
        return fail(error,
            QStringLiteral("%1: \"version\" %2 is not one this program reads (%3)")
                .arg(sourceName, QString::fromStdString(j.value("version", json()).dump()))
                .arg(Version));
    for (const char *name : { "files", "refs", "blobs" })
        if (!j.contains(name) || !j[name].is_object())
            return fail(error,
                QStringLiteral("%1: \"%2\" is missing or not an object")
                    .arg(sourceName, QLatin1String(name)));
    if (!j.contains("commits") || !j["commits"].is_array())
        return fail(error, QStringLiteral("%1: \"commits\" is missing or not an array").arg(sourceName));
    if (!j["files"].contains("run.json"))
        return fail(error, QStringLiteral("%1: \"files\" has no run.json").arg(sourceName));

    const QDir dir(runDir);
    if (dir.exists() && !dir.isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot))
        return fail(
            error, QStringLiteral("%1 is not empty; a recording is restored into a new folder").arg(runDir));
    if (!QDir().mkpath(runDir))
        return fail(error, QStringLiteral("cannot create %1").arg(runDir));
    // Whatever goes wrong below, no half-restored run is left to be opened.
    bool ok = false;
    struct Cleanup
    {
        QString dir;
        const bool &ok;
        ~Cleanup()
        {
            if (!ok)
                QDir(dir).removeRecursively();
        }
    } cleanup { runDir, ok };

    QString gitError;
    auto repo = GitRepo::init(runDir, &gitError);
    if (!repo)
        return fail(error, QStringLiteral("%1: %2").arg(runDir, gitError));
    for (auto it = j["blobs"].begin(); it != j["blobs"].end(); ++it) {
        const QString id = QString::fromStdString(it.key());
        if (!it->is_string())
            return fail(error, QStringLiteral("%1: blobs.%2 is not a string").arg(sourceName, id));
        const QString written = repo->writeBlob(QByteArray::fromStdString(it->get<std::string>()), &gitError);
        if (written != id)
            return fail(error,
                QStringLiteral("%1: blob %2 does not match its content (%3)")
                    .arg(sourceName, id, written.isEmpty() ? gitError : written));
    }
    int index = 0;
    for (const json &c : j["commits"]) {
        const QString where = QStringLiteral("%1: commits[%2]").arg(sourceName).arg(index++);
        QString id, message;
        if (!c.is_object() || !field(c, "id", where, &id, error)
            || !field(c, "message", where, &message, error))
            return c.is_object() ? false : fail(error, QStringLiteral("%1 is not an object").arg(where));
        if (!c.contains("tree") || !c["tree"].is_object() || !c.contains("parents")
            || !c["parents"].is_array() || !c.contains("time") || !c["time"].is_number_integer())
            return fail(error,
                QStringLiteral("%1 (%2): \"tree\", \"parents\" or \"time\" is missing or of the wrong type")
                    .arg(where, id));
        QMap<QString, QString> files;
        for (auto it = c["tree"].begin(); it != c["tree"].end(); ++it) {
            if (!it->is_string())
                return fail(error,
                    QStringLiteral("%1 (%2): tree.%3 is not a blob id")
                        .arg(where, id, QString::fromStdString(it.key())));
            const QString path = QString::fromStdString(it.key());
            // Paths are written into the work tree: nothing may point outside the run.
            if (path.isEmpty() || path.startsWith(QLatin1Char('/'))
                || path.split(QLatin1Char('/')).contains(QStringLiteral("..")))
                return fail(error,
                    QStringLiteral("%1 (%2): tree path \"%3\" leaves the run directory")
                        .arg(where, id, path));
            files.insert(path, qstr(*it));
        }
        QStringList parents;
        for (const json &p : c["parents"])
            if (p.is_string())
                parents << qstr(p);
        const QDateTime when = QDateTime::fromSecsSinceEpoch(
            c["time"].get<qint64>(), Qt::OffsetFromUTC, int(jsonfield::integer(c, "offset_minutes", 0)) * 60);
        const QString tree = repo->writeTree(files, &gitError);
        const QString written
            = tree.isEmpty() ? QString() : repo->writeCommit(tree, parents, message, when, &gitError);
        if (written != id)
            return fail(error,
                QStringLiteral("%1: commit %2 came back as %3; the recording is not whole")
                    .arg(where, id, written.isEmpty() ? gitError : written));
    }
    for (auto it = j["refs"].begin(); it != j["refs"].end(); ++it) {
        const QString ref = QString::fromStdString(it.key());
        if (!it->is_string()
            || !repo->setRef(ref, qstr(*it), QStringLiteral("restored from a recording"), &gitError))
            return fail(error, QStringLiteral("%1: refs.%2: %3").arg(sourceName, ref, gitError));
    }
    const QString head = jsonfield::text(j, "head");
    const QString best = head.isEmpty() ? QString() : repo->resolveRef(head);
    if (!best.isEmpty()) {
        if (!repo->setHeadSymbolic(head, &gitError))
            return fail(error, QStringLiteral("%1: head: %2").arg(sourceName, gitError));
        // The work tree as the run left it: the best commit's files (each kernel's head kernel.py).
        const QMap<QString, QString> files = repo->filesOf(best);
        for (auto it = files.constBegin(); it != files.constEnd(); ++it) {
            const QString path = dir.filePath(it.key());
            if (!QDir().mkpath(QFileInfo(path).absolutePath())
                || !AtomicFile::write(path, repo->readBlobById(it.value()), &gitError))
                return fail(error, QStringLiteral("%1: %2").arg(path, gitError));
        }
        if (!repo->resetIndex(repo->treeOf(best), &gitError))
            return fail(error, QStringLiteral("%1: %2").arg(runDir, gitError));
    }
    for (auto it = j["files"].begin(); it != j["files"].end(); ++it) {
        const QString name = QString::fromStdString(it.key());
        if (name.contains(QLatin1Char('/')) || name.startsWith(QLatin1Char('.')) || !it->is_string())
            return fail(error,
                QStringLiteral("%1: files.%2 is not a plain file name with text").arg(sourceName, name));
        if (!AtomicFile::write(
                dir.filePath(name), QByteArray::fromStdString(it->get<std::string>()), &gitError))
            return fail(error, QStringLiteral("%1: %2").arg(dir.filePath(name), gitError));
    }
    const json *recorded = jsonfield::object(j, "recording");
    json marker = { { "recording", recorded ? *recorded : json::object() }, { "source", str(sourceName) } };
    if (!AtomicFile::write(
            dir.filePath(QLatin1String(MarkerFile)), QByteArray::fromStdString(marker.dump(1)), &gitError))
        return fail(error, gitError);
    ok = true;
    return true;
}

} // namespace ak
