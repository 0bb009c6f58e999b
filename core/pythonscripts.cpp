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

namespace ak {

namespace {

QString resourcePath(const QString &relative)
{
    return QLatin1String(PythonScripts::kResourceRoot) + QLatin1Char('/') + relative;
}

// True when every resource file exists in `dir` with the same size: a cheap check that catches a
// directory someone partly deleted, without re-reading every byte on each start.
bool isComplete(const QString &dir, const QStringList &files)
{
    for (const QString &f : files) {
        const QFileInfo target(dir + QLatin1Char('/') + f);
        if (!target.isFile() || target.size() != QFileInfo(resourcePath(f)).size())
            return false;
    }
    return !files.isEmpty();
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
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) || out.write(in.readAll()) < 0 || !out.flush()) {
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

QString PythonScripts::defaultCacheRoot()
{
    // GenericCacheLocation honours $XDG_CACHE_HOME on Linux and is read on every call.
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) + QStringLiteral("/autokernel");
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
    const QString tmpDir = finalDir + QStringLiteral(".tmp-") + QUuid::createUuid().toString(QUuid::Id128).left(12);
    if (!writeTree(tmpDir, list, &err)) {
        QDir(tmpDir).removeRecursively();
        return QString();
    }
    if (QFileInfo::exists(finalDir) && !isComplete(finalDir, list)) // damaged: replace it
        QDir(finalDir).removeRecursively();
    if (!QDir().rename(tmpDir, finalDir)) {
        // Another process may have won the race; its tree is as good as ours.
        QDir(tmpDir).removeRecursively();
        if (!isComplete(finalDir, list)) {
            err = QStringLiteral("cannot move %1 into place at %2").arg(tmpDir, finalDir);
            return QString();
        }
    }
    return finalDir;
}

QString PythonScripts::directory(QString *error)
{
    static QMutex mutex;
    static QString cached;
    QMutexLocker lock(&mutex);
    if (!cached.isEmpty() && QFileInfo::exists(cached + QStringLiteral("/akworker.py")))
        return cached;
    cached = extractTo(defaultCacheRoot(), error);
    return cached;
}

} // namespace ak
