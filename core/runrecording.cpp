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

#include <algorithm>
#include <memory>

using nlohmann::json;

namespace ak {

namespace {

// The run's files outside git or read from the work tree; experiments.jsonl is the index.
const char *const kRunFiles[]
    = { "run.json", "profile.json", "verification.json", "inmodel.json", "experiments.jsonl", "results.tsv" };
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

// The run's text files (kRunFiles) that exist in `dir`, by name; a file that is not UTF-8 is refused.
bool readRunFiles(const QDir &dir, json *files, QString *error)
{
    *files = json::object();
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
        (*files)[name] = data.toStdString();
    }
    return true;
}

// write()'s git side: the run's refs and every blob and commit they reach, each once. Errors name the
// object and where it was found (a ref, or a path at a commit).
class ObjectCollector
{
public:
    ObjectCollector(GitRepo &repo, QString *error)
        : m_repo(repo)
        , m_error(error)
    { }

    // Each ref of the run (kRefGlobs) and its target: reply refs point at blobs, the others at commits.
    bool addRefs()
    {
        for (const char *glob : kRefGlobs) {
            for (const QString &ref : m_repo.listRefs(QLatin1String(glob))) {
                const QString target = m_repo.resolveRef(ref);
                m_refs[str(ref)] = str(target);
                if (ref.startsWith(QLatin1String(GitRepo::BlobRefPrefix))) {
                    if (!addBlob(target, ref))
                        return false;
                } else {
                    m_roots << target;
                }
            }
        }
        return true;
    }

    // Every commit reachable from the refs, parents before children (restore writes them in order).
    bool addCommits()
    {
        for (const QString &root : m_roots)
            if (!visit(root))
                return false;
        return true;
    }

    const json &refs() const { return m_refs; }
    const json &blobs() const { return m_blobs; }
    const json &commits() const { return m_commits; }

private:
    bool addBlob(const QString &id, const QString &what)
    {
        if (m_blobs.contains(str(id)))
            return true;
        QString readError;
        const QByteArray data = m_repo.readBlobById(id, &readError);
        if (!readError.isEmpty())
            return fail(m_error, QStringLiteral("%1: %2").arg(what, readError));
        if (!isUtf8Text(data))
            return fail(m_error,
                QStringLiteral("%1 (blob %2) is not UTF-8 text; a recording holds text only").arg(what, id));
        m_blobs[str(id)] = data.toStdString();
        return true;
    }

    bool visit(const QString &id)
    {
        if (m_seen.contains(id))
            return true;
        m_seen.insert(id);
        const QStringList parents = m_repo.parentsOf(id);
        for (const QString &p : parents)
            if (!visit(p))
                return false;
        const QMap<QString, QString> tree = m_repo.filesOf(id);
        json treeJson = json::object();
        for (auto it = tree.constBegin(); it != tree.constEnd(); ++it) {
            if (!addBlob(it.value(), QStringLiteral("%1 at commit %2").arg(it.key(), id.left(8))))
                return false;
            treeJson[str(it.key())] = str(it.value());
        }
        json parentIds = json::array();
        for (const QString &p : parents)
            parentIds.push_back(str(p));
        const QDateTime when = m_repo.timeOf(id);
        m_commits.push_back({ { "id", str(id) }, { "parents", parentIds }, { "tree", treeJson },
            { "message", str(m_repo.messageOf(id)) }, { "time", when.toSecsSinceEpoch() },
            { "offset_minutes", when.offsetFromUtc() / 60 } });
        return true;
    }

    GitRepo &m_repo;
    QString *m_error;
    QStringList m_roots;
    QSet<QString> m_seen;
    json m_refs = json::object();
    json m_blobs = json::object();
    json m_commits = json::array();
};

// The "recording" object: what the window's summary shows (model, device, experiments) and when.
json recordingMeta(const QByteArray &runJson, const json &files, const QString &note)
{
    json meta = json::object();
    try {
        const json run = json::parse(runJson.toStdString());
        meta["model"] = str(jsonfield::text(run, "model"));
        if (const json *device = jsonfield::object(run, "device"))
            meta["device"] = str(jsonfield::text(*device, "name"));
    } catch (const json::exception &) {
        // The recording still holds run.json as it is; only the summary lacks model and device.
    }
    int experiments = 0;
    if (files.contains("experiments.jsonl")) {
        const std::string &log = files["experiments.jsonl"].get_ref<const std::string &>();
        experiments = int(std::count(log.begin(), log.end(), '\n'));
    }
    meta["experiments"] = experiments;
    meta["recorded"] = str(QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    meta["note"] = str(note);
    return meta;
}

// The recording's envelope, checked before anything is written: JSON, format, version, and the
// sections restore() walks, each of the type it expects.
bool parseRecording(const QByteArray &recording, const QString &sourceName, json *out, QString *error)
{
    json &j = *out;
    try {
        j = json::parse(recording.toStdString());
    } catch (const json::exception &e) {
        return fail(error, QStringLiteral("%1: not JSON: %2").arg(sourceName, QString::fromUtf8(e.what())));
    }
    if (!isRecordingFormat(j))
        return fail(error,
            QStringLiteral("%1: not an AutoKernel recording (\"format\" is not \"%2\")")
                .arg(sourceName, QLatin1String(RunRecording::Format)));
    if (jsonfield::integer(j, "version", 0) != RunRecording::Version)
        return fail(error,
            QStringLiteral("%1: \"version\" %2 is not one this program reads (%3)")
                .arg(sourceName, QString::fromStdString(j.value("version", json()).dump()))
                .arg(RunRecording::Version));
    for (const char *name : { "files", "refs", "blobs" })
        if (!j.contains(name) || !j[name].is_object())
            return fail(error,
                QStringLiteral("%1: \"%2\" is missing or not an object")
                    .arg(sourceName, QLatin1String(name)));
    if (!j.contains("commits") || !j["commits"].is_array())
        return fail(error, QStringLiteral("%1: \"commits\" is missing or not an array").arg(sourceName));
    if (!j["files"].contains("run.json"))
        return fail(error, QStringLiteral("%1: \"files\" has no run.json").arg(sourceName));
    return true;
}

// A recording is restored into a new folder only: never over a run or anything else.
bool makeEmptyRunDir(const QString &runDir, QString *error)
{
    const QDir dir(runDir);
    if (dir.exists() && !dir.isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot))
        return fail(
            error, QStringLiteral("%1 is not empty; a recording is restored into a new folder").arg(runDir));
    if (!QDir().mkpath(runDir))
        return fail(error, QStringLiteral("cannot create %1").arg(runDir));
    return true;
}

// restore()'s steps, in order, over a recording parseRecording() accepted. Every error names the
// source and the field or object; m_gitError carries libgit2's last word from step to step.
class Restorer
{
public:
    Restorer(json &recording, const QString &sourceName, const QString &runDir, QString *error)
        : m_j(recording)
        , m_source(sourceName)
        , m_runDir(runDir)
        , m_dir(runDir)
        , m_error(error)
    { }

    bool initRepo()
    {
        m_repo = GitRepo::init(m_runDir, &m_gitError);
        return m_repo ? true : fail(m_error, QStringLiteral("%1: %2").arg(m_runDir, m_gitError));
    }

    // Each blob must hash to the id it was recorded under.
    bool writeBlobs()
    {
        for (auto it = m_j["blobs"].begin(); it != m_j["blobs"].end(); ++it) {
            const QString id = QString::fromStdString(it.key());
            if (!it->is_string())
                return fail(m_error, QStringLiteral("%1: blobs.%2 is not a string").arg(m_source, id));
            const QString written
                = m_repo->writeBlob(QByteArray::fromStdString(it->get<std::string>()), &m_gitError);
            if (written != id)
                return fail(m_error,
                    QStringLiteral("%1: blob %2 does not match its content (%3)")
                        .arg(m_source, id, written.isEmpty() ? m_gitError : written));
        }
        return true;
    }

    // Parents come before children in the recording; each commit must come back with its id.
    bool writeCommits()
    {
        int index = 0;
        for (const json &c : m_j["commits"])
            if (!writeCommit(c, QStringLiteral("%1: commits[%2]").arg(m_source).arg(index++)))
                return false;
        return true;
    }

    bool setRefs()
    {
        for (auto it = m_j["refs"].begin(); it != m_j["refs"].end(); ++it) {
            const QString ref = QString::fromStdString(it.key());
            if (!it->is_string()
                || !m_repo->setRef(ref, qstr(*it), QStringLiteral("restored from a recording"), &m_gitError))
                return fail(m_error, QStringLiteral("%1: refs.%2: %3").arg(m_source, ref, m_gitError));
        }
        return true;
    }

    // HEAD and the work tree as the run left them: the best commit's files (each kernel's head
    // kernel.py). A recording without a head leaves both empty.
    bool checkOutHead()
    {
        const QString head = jsonfield::text(m_j, "head");
        const QString best = head.isEmpty() ? QString() : m_repo->resolveRef(head);
        if (best.isEmpty())
            return true;
        if (!m_repo->setHeadSymbolic(head, &m_gitError))
            return fail(m_error, QStringLiteral("%1: head: %2").arg(m_source, m_gitError));
        const QMap<QString, QString> files = m_repo->filesOf(best);
        for (auto it = files.constBegin(); it != files.constEnd(); ++it) {
            const QString path = m_dir.filePath(it.key());
            if (!QDir().mkpath(QFileInfo(path).absolutePath())
                || !AtomicFile::write(path, m_repo->readBlobById(it.value()), &m_gitError))
                return fail(m_error, QStringLiteral("%1: %2").arg(path, m_gitError));
        }
        if (!m_repo->resetIndex(m_repo->treeOf(best), &m_gitError))
            return fail(m_error, QStringLiteral("%1: %2").arg(m_runDir, m_gitError));
        return true;
    }

    // The run's files beside git (run.json, experiments.jsonl, ...): plain names only.
    bool writeRunFiles()
    {
        for (auto it = m_j["files"].begin(); it != m_j["files"].end(); ++it) {
            const QString name = QString::fromStdString(it.key());
            if (name.contains(QLatin1Char('/')) || name.startsWith(QLatin1Char('.')) || !it->is_string())
                return fail(m_error,
                    QStringLiteral("%1: files.%2 is not a plain file name with text").arg(m_source, name));
            if (!AtomicFile::write(
                    m_dir.filePath(name), QByteArray::fromStdString(it->get<std::string>()), &m_gitError))
                return fail(m_error, QStringLiteral("%1: %2").arg(m_dir.filePath(name), m_gitError));
        }
        return true;
    }

    // The marker that makes the window say "recording" (isRecording() reads it).
    bool writeMarker()
    {
        const json *recorded = jsonfield::object(m_j, "recording");
        json marker = { { "recording", recorded ? *recorded : json::object() }, { "source", str(m_source) } };
        if (!AtomicFile::write(m_dir.filePath(QLatin1String(RunRecording::MarkerFile)),
                QByteArray::fromStdString(marker.dump(1)), &m_gitError))
            return fail(m_error, m_gitError);
        return true;
    }

private:
    bool writeCommit(const json &c, const QString &where)
    {
        QString id, message;
        if (!c.is_object() || !field(c, "id", where, &id, m_error)
            || !field(c, "message", where, &message, m_error))
            return c.is_object() ? false : fail(m_error, QStringLiteral("%1 is not an object").arg(where));
        if (!c.contains("tree") || !c["tree"].is_object() || !c.contains("parents")
            || !c["parents"].is_array() || !c.contains("time") || !c["time"].is_number_integer())
            return fail(m_error,
                QStringLiteral("%1 (%2): \"tree\", \"parents\" or \"time\" is missing or of the wrong type")
                    .arg(where, id));
        QMap<QString, QString> files;
        if (!readTree(c["tree"], where, id, &files))
            return false;
        QStringList parents;
        for (const json &p : c["parents"])
            if (p.is_string())
                parents << qstr(p);
        const QDateTime when = QDateTime::fromSecsSinceEpoch(
            c["time"].get<qint64>(), Qt::OffsetFromUTC, int(jsonfield::integer(c, "offset_minutes", 0)) * 60);
        const QString tree = m_repo->writeTree(files, &m_gitError);
        const QString written
            = tree.isEmpty() ? QString() : m_repo->writeCommit(tree, parents, message, when, &m_gitError);
        if (written != id)
            return fail(m_error,
                QStringLiteral("%1: commit %2 came back as %3; the recording is not whole")
                    .arg(where, id, written.isEmpty() ? m_gitError : written));
        return true;
    }

    // A commit's tree: path -> blob id. Paths are written into the work tree, so nothing may point
    // outside the run.
    bool readTree(const json &tree, const QString &where, const QString &id, QMap<QString, QString> *files)
    {
        for (auto it = tree.begin(); it != tree.end(); ++it) {
            if (!it->is_string())
                return fail(m_error,
                    QStringLiteral("%1 (%2): tree.%3 is not a blob id")
                        .arg(where, id, QString::fromStdString(it.key())));
            const QString path = QString::fromStdString(it.key());
            if (path.isEmpty() || path.startsWith(QLatin1Char('/'))
                || path.split(QLatin1Char('/')).contains(QStringLiteral("..")))
                return fail(m_error,
                    QStringLiteral("%1 (%2): tree path \"%3\" leaves the run directory")
                        .arg(where, id, path));
            files->insert(path, qstr(*it));
        }
        return true;
    }

    json &m_j;
    QString m_source;
    QString m_runDir;
    QDir m_dir;
    QString *m_error;
    std::unique_ptr<GitRepo> m_repo;
    QString m_gitError;
};

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

    json files;
    if (!readRunFiles(dir, &files, error))
        return false;
    ObjectCollector objects(*repo, error);
    if (!objects.addRefs() || !objects.addCommits())
        return false;

    json out;
    out["format"] = Format;
    out["version"] = Version;
    out["recording"] = recordingMeta(runJson.readAll(), files, note);
    out["files"] = files;
    out["refs"] = objects.refs();
    out["head"] = str(repo->resolveRef(QStringLiteral("refs/heads/best")).isEmpty()
            ? QString()
            : QStringLiteral("refs/heads/best"));
    out["commits"] = objects.commits();
    out["blobs"] = objects.blobs();
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
    if (!parseRecording(recording, sourceName, &j, error) || !makeEmptyRunDir(runDir, error))
        return false;
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

    Restorer restorer(j, sourceName, runDir, error);
    ok = restorer.initRepo() && restorer.writeBlobs() && restorer.writeCommits() && restorer.setRefs()
        && restorer.checkOutHead() && restorer.writeRunFiles() && restorer.writeMarker();
    return ok;
}

} // namespace ak
