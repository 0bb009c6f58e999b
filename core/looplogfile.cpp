#include "looplogfile.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>
#include <QRegularExpression>

namespace ak {

namespace {

constexpr qint64 HeadBytes = 64;

QByteArray headOf(QFile &f)
{
    f.seek(0);
    return f.read(HeadBytes);
}

} // namespace

QString LoopLogFile::path(const QString &runDir)
{
    return QDir(runDir).filePath(QStringLiteral(".git/autokernel-loop.log"));
}

QByteArray LoopLogFile::format(qint64 pid, const QString &text, const QDateTime &when)
{
    QString oneLine = text;
    oneLine.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return QStringLiteral("%1 [pid %2] %3\n")
        .arg(when.toUTC().toString(Qt::ISODate))
        .arg(pid)
        .arg(oneLine)
        .toUtf8();
}

void LoopLogFile::append(const QString &runDir, const QString &text)
{
    static QMutex mutex;
    const QByteArray line = format(QCoreApplication::applicationPid(), text, QDateTime::currentDateTimeUtc());
    const QString file = path(runDir);
    QMutexLocker locker(&mutex);
    if (QFileInfo(file).size() + line.size() > MaxBytes) {
        const QString old = file + QStringLiteral(".1");
        QFile::remove(old);
        QFile::rename(file, old);
    }
    QFile f(file);
    if (f.open(QIODevice::WriteOnly | QIODevice::Append))
        f.write(line);
}

LoopLogFile::Position LoopLogFile::endOf(const QString &runDir)
{
    Position pos;
    QFile f(path(runDir));
    if (f.open(QIODevice::ReadOnly)) {
        pos.head = headOf(f);
        pos.offset = f.size();
    }
    return pos;
}

std::vector<LoopLogFile::Line> LoopLogFile::readNew(const QString &runDir, Position *pos)
{
    std::vector<Line> lines;
    QFile f(path(runDir));
    if (!f.open(QIODevice::ReadOnly)) {
        *pos = Position(); // gone: a new file starts from its beginning
        return lines;
    }
    const qint64 size = f.size();
    const QByteArray head = headOf(f);
    // Rotated or truncated: the file is shorter than what was read, or starts differently.
    // (The file only grows until rotated, so its first bytes never change while it is the same file.)
    const int common = int(qMin(head.size(), pos->head.size()));
    if (size < pos->offset || head.left(common) != pos->head.left(common))
        *pos = Position();
    pos->head = head;
    qint64 from = pos->offset;
    if (size - from > MaxBytes) { // a reader far behind shows the newest lines, not a flood
        from = size - MaxBytes;
        pos->partial.clear();
    }
    if (size <= from) {
        pos->offset = size;
        return lines;
    }
    f.seek(from);
    QByteArray data = pos->partial + f.read(size - from);
    pos->offset = from + (data.size() - pos->partial.size());
    const int lastNewline = data.lastIndexOf('\n');
    pos->partial = lastNewline < 0 ? data : data.mid(lastNewline + 1);
    if (lastNewline < 0)
        return lines;
    data.truncate(lastNewline);
    static const QRegularExpression pidPrefix(QStringLiteral("^\\S+ \\[pid (\\d+)\\] "));
    for (const QByteArray &raw : data.split('\n')) {
        const QString text = QString::fromUtf8(raw);
        if (text.trimmed().isEmpty())
            continue;
        Line line;
        const QRegularExpressionMatch m = pidPrefix.match(text);
        if (m.hasMatch()) {
            line.pid = m.captured(1).toLongLong();
            line.text = text.mid(m.capturedLength());
        } else {
            line.text = text;
        }
        lines.push_back(line);
    }
    return lines;
}

} // namespace ak
