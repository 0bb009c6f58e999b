#pragma once

// Where a secret ended up: every file under a run directory (.git included), git's loose objects
// searched inflated too (they are zlib streams). Shared by the loop's and the window's secret tests.

#include <QByteArray>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QString>
#include <QStringList>

namespace ak::test {

// The files under `dir` that hold `secret` ("... (inflated)" for a loose object, "... (cannot
// inflate)" for one that is not a zlib stream). `files` counts every file read, `objects` the loose
// objects inflated (a test asserts it looked at some).
inline QStringList filesHolding(
    const QString &dir, const QByteArray &secret, int *files = nullptr, int *objects = nullptr)
{
    QStringList found;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        const QByteArray data = f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        if (files)
            ++*files;
        if (data.contains(secret))
            found << path;
        if (path.contains(QLatin1String("/.git/objects/")) && !path.contains(QLatin1String("/pack/"))
            && !path.contains(QLatin1String("/info/"))) {
            QByteArray framed(4, '\0'); // qUncompress wants a 4-byte big-endian size hint
            framed[1] = 0x10;
            framed += data;
            const QByteArray inflated = qUncompress(framed);
            if (inflated.isEmpty())
                found << path + QStringLiteral(" (cannot inflate)");
            else if (inflated.contains(secret))
                found << path + QStringLiteral(" (inflated)");
            if (objects)
                ++*objects;
        }
    }
    return found;
}

} // namespace ak::test
