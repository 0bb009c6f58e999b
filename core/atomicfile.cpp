#include "atomicfile.h"
#include "errorout.h"

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace ak {

namespace {
std::atomic<bool> s_sync { true };

QString errnoText()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}
} // namespace

bool AtomicFile::write(const QString &path, const QByteArray &data, QString *error)
{
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        return fail(error, QStringLiteral("%1: cannot create folder").arg(info.absolutePath()));
    // QSaveFile writes a temporary next to the target, fsyncs it in commit() and renames it over.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return fail(error, QStringLiteral("%1: %2").arg(path, file.errorString()));
    if (file.write(data) != data.size()) {
        const QString why = file.errorString();
        file.cancelWriting();
        return fail(error, QStringLiteral("%1: %2").arg(path, why));
    }
    if (!file.commit())
        return fail(error, QStringLiteral("%1: %2").arg(path, file.errorString()));
    // The rename itself lives in the folder's metadata.
    return syncDirectory(info.absolutePath(), error);
}

bool AtomicFile::append(const QString &path, const QByteArray &data, QString *error)
{
    const QByteArray native = QFile::encodeName(path);
    const bool existed = QFileInfo::exists(path);
    const int fd = ::open(native.constData(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(error, QStringLiteral("%1: %2").arg(path, errnoText()));
    const char *p = data.constData();
    qsizetype left = data.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, size_t(left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const QString why = errnoText();
            ::close(fd);
            return fail(error, QStringLiteral("%1: %2").arg(path, why));
        }
        p += n;
        left -= n;
    }
    if (s_sync && ::fsync(fd) != 0) {
        const QString why = errnoText();
        ::close(fd);
        return fail(error, QStringLiteral("%1: fsync: %2").arg(path, why));
    }
    ::close(fd);
    return existed || syncDirectory(QFileInfo(path).absolutePath(), error);
}

void AtomicFile::setSyncEnabled(bool on)
{
    s_sync = on;
}

bool AtomicFile::syncEnabled()
{
    return s_sync;
}

bool AtomicFile::syncDirectory(const QString &dir, QString *error)
{
    if (!s_sync)
        return true;
    const int fd = ::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fail(error, QStringLiteral("%1: %2").arg(dir, errnoText()));
    const bool ok = ::fsync(fd) == 0;
    const QString why = ok ? QString() : errnoText();
    ::close(fd);
    return ok || fail(error, QStringLiteral("%1: fsync: %2").arg(dir, why));
}

} // namespace ak
