#include "pythonscripts.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>
#include <QStandardPaths>
#include <QUuid>

#include <nlohmann/json.hpp>

namespace ak {

namespace {

QString resourcePath(const QString &relative)
{
    return QLatin1String(PythonScripts::kResourceRoot) + QLatin1Char('/') + relative;
}

// True when every resource file exists in `dir` with the same bytes. By content, not size: the judge
// runs from here, and a file rewritten to the same length (by a kernel in a sandbox-less bench, say)
// must not be trusted. Reading the tree costs a few milliseconds per worker start.
bool isComplete(const QString &dir, const QStringList &files)
{
    for (const QString &f : files) {
        QFile target(dir + QLatin1Char('/') + f);
        QFile resource(resourcePath(f));
        if (!target.open(QIODevice::ReadOnly) || !resource.open(QIODevice::ReadOnly)
            || target.size() != resource.size() || target.readAll() != resource.readAll())
            return false;
    }
    return !files.isEmpty();
}

// Read-only once written: nothing run by this user should edit the judge by accident.
void makeReadOnly(const QString &dir)
{
    QDirIterator it(dir, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    QStringList dirs;
    while (it.hasNext()) {
        const QString path = it.next();
        if (it.fileInfo().isDir())
            dirs << path;
        else
            QFile::setPermissions(
                path, QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther);
    }
    dirs << dir;
    for (const QString &d : std::as_const(dirs))
        QFile::setPermissions(d,
            QFileDevice::ReadOwner | QFileDevice::ExeOwner | QFileDevice::ReadGroup | QFileDevice::ExeGroup
                | QFileDevice::ReadOther | QFileDevice::ExeOther);
}

// A read-only tree cannot be deleted until its folders are writable again.
bool removeTree(const QString &dir)
{
    QDirIterator it(dir, QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext())
        QFile::setPermissions(
            it.next(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return QDir(dir).removeRecursively();
}

bool writeTree(const QString &dir, const QStringList &files, QString *error)
{
    for (const QString &f : files) {
        const QString target = dir + QLatin1Char('/') + f;
        if (!QDir().mkpath(QFileInfo(target).path())) {
            *error = QStringLiteral("cannot create directory %1").arg(QFileInfo(target).path());
            return false;
        }
        QFile in(resourcePath(f));
        QFile out(target);
        if (!in.open(QIODevice::ReadOnly)) {
            *error = QStringLiteral("cannot read resource %1").arg(in.fileName());
            return false;
        }
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) || out.write(in.readAll()) < 0
            || !out.flush()) {
            *error = QStringLiteral("cannot write %1: %2").arg(target, out.errorString());
            return false;
        }
    }
    return true;
}

} // namespace

QStringList PythonScripts::files()
{
    QStringList out;
    const QString root = QLatin1String(kResourceRoot);
    QDirIterator it(root, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        out << path.mid(root.size() + 1);
    }
    out.sort();
    return out;
}

QString PythonScripts::contentHash()
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const QString &f : files()) {
        QFile in(resourcePath(f));
        if (!in.open(QIODevice::ReadOnly))
            continue;
        hash.addData(f.toUtf8());
        hash.addData(QByteArrayView("\0", 1));
        hash.addData(in.readAll());
        hash.addData(QByteArrayView("\0", 1));
    }
    return QString::fromLatin1(hash.result().toHex().left(16));
}

QByteArray PythonScripts::bundle()
{
    static const QByteArray packed = [] {
        nlohmann::json files = nlohmann::json::object();
        for (const QString &f : PythonScripts::files()) {
            QFile in(resourcePath(f));
            if (in.open(QIODevice::ReadOnly))
                files[f.toStdString()] = in.readAll().toBase64().toStdString();
        }
        return qCompress(QByteArray::fromStdString(files.dump()), 9);
    }();
    return packed;
}

QString PythonScripts::bootstrapSource()
{
    QFile in(resourcePath(QStringLiteral("akboot.py")));
    return in.open(QIODevice::ReadOnly) ? QString::fromUtf8(in.readAll()) : QString();
}

QString PythonScripts::defaultCacheRoot()
{
    // GenericCacheLocation honours $XDG_CACHE_HOME on Linux and is read on every call.
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation)
        + QStringLiteral("/autokernel");
}

QString PythonScripts::extractTo(const QString &cacheRoot, QString *error)
{
    QString localError;
    QString &err = error ? *error : localError;
    const QStringList list = files();
    if (!list.contains(QStringLiteral("akworker.py"))) {
        err = QStringLiteral("akworker.py is not among the embedded resources (%1): the build did not link "
                             "core's Python resources")
                  .arg(QLatin1String(kResourceRoot));
        return QString();
    }
    const QString finalDir = QDir(cacheRoot).absoluteFilePath(QStringLiteral("python-") + contentHash());
    if (isComplete(finalDir, list))
        return finalDir;

    if (!QDir().mkpath(cacheRoot)) {
        err = QStringLiteral("cannot create the cache directory %1").arg(cacheRoot);
        return QString();
    }
    const QString tmpDir
        = finalDir + QStringLiteral(".tmp-") + QUuid::createUuid().toString(QUuid::Id128).left(12);
    if (!writeTree(tmpDir, list, &err)) {
        removeTree(tmpDir);
        return QString();
    }
    makeReadOnly(tmpDir);
    if (QFileInfo::exists(finalDir) && !isComplete(finalDir, list)) // damaged or edited: replace it
        removeTree(finalDir);
    if (!QDir().rename(tmpDir, finalDir)) {
        // Another process may have won the race; its tree is as good as ours.
        removeTree(tmpDir);
        if (!isComplete(finalDir, list)) {
            err = QStringLiteral("cannot move %1 into place at %2").arg(tmpDir, finalDir);
            return QString();
        }
    }
    return finalDir;
}

QString PythonScripts::directory(QString *error)
{
    // Checked on every call (every worker start), by content: see isComplete().
    static QMutex mutex;
    QMutexLocker lock(&mutex);
    return extractTo(defaultCacheRoot(), error);
}

} // namespace ak
