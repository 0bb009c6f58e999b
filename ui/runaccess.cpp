#include "runaccess.h"

#include "runstore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <unistd.h>

namespace ak {

namespace {

QString accessText(const char *text)
{
    return QCoreApplication::translate("RunAccess", text);
}

QString copyHint(const QString &dir)
{
    return accessText("To work on it, make a copy of your own: autokernel-cli record %1 --out run.json, then "
                      "autokernel-cli restore run.json --out DIR, and open DIR.")
        .arg(QDir::toNativeSeparators(dir));
}

} // namespace

bool RunAccess::canCreateFileIn(const QString &dir, QString *error)
{
    QFile probe(QDir(dir).filePath(
        QStringLiteral(".autokernel-write-probe-%1").arg(QCoreApplication::applicationPid())));
    if (!probe.open(QIODevice::WriteOnly | QIODevice::NewOnly)) {
        if (error)
            *error = probe.errorString();
        return false;
    }
    probe.close();
    probe.remove();
    return true;
}

RunAccess RunAccess::check(const QString &dir)
{
    RunAccess a;
    const QFileInfo info(dir);
    if (!info.isDir())
        return a;
    if (const QString why = RunStore::readOnlyReason(dir); !why.isEmpty()) {
        a.readOnlyWhy = why;
        return a;
    }
    const uint owner = info.ownerId();
    if (owner != uint(-2) && owner != uint(::geteuid())) {
        const QString name = info.owner().isEmpty() ? QString::number(owner) : info.owner();
        a.readOnlyWhy
            = accessText("this run belongs to user %1, not to you: the window shows it but does not "
                         "steer it (steering would leave files of yours in another user's run).")
                  .arg(name);
        a.whatToDo = accessText("%1 Or ask %2 to steer it, or to give it to you (chown -R).")
                         .arg(copyHint(dir), name);
        return a;
    }
    const QString git = QDir(dir).filePath(QStringLiteral(".git"));
    QString error;
    for (const QString &folder : { dir, git }) {
        if (!QFileInfo(folder).isDir())
            continue;
        if (!QFileInfo(folder).isWritable() || !canCreateFileIn(folder, &error)) {
            a.readOnlyWhy = accessText("its folder %1 cannot be written (%2).")
                                .arg(QDir::toNativeSeparators(folder),
                                    error.isEmpty() ? accessText("no write permission") : error);
            a.whatToDo
                = accessText("Fix its permissions (chmod -R u+w %1, or remount the disk read-write), then "
                             "File ▸ Reload. %2")
                      .arg(QDir::toNativeSeparators(dir), copyHint(dir));
            return a;
        }
    }
    return a;
}

} // namespace ak
