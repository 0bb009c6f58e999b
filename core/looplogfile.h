#pragma once

#include <QByteArray>
#include <QString>

#include <vector>

namespace ak {

// The loop's live lines kept in the run (.git/autokernel-loop.log), so a window watching a loop that
// runs elsewhere (the CLI, another window) can show them: before, such a loop was visible only
// through its effects. One line per message, "<UTC time> [pid N] <text>"; the pid lets a window
// leave out its own loop's lines, which it already shows. The file is capped at MaxBytes: at the cap
// it is renamed to autokernel-loop.log.1 (replacing the older one) and a new one started.
//
// Written from loop threads: append() is thread-safe within a process; a run has one writer process.
class LoopLogFile
{
public:
    static constexpr qint64 MaxBytes = 1024 * 1024;

    static QString path(const QString &runDir);
    // Best effort, no fsync: a lost line costs nothing, a slow one slows the loop.
    static void append(const QString &runDir, const QString &text);
    // The line as written, for tests and other writers: `when` is the UTC time.
    static QByteArray format(qint64 pid, const QString &text, const QDateTime &when);

    struct Line
    {
        qint64 pid = 0; // 0 when the line has none (written by hand)
        QString text;
    };

    // Where a reader is in the file. A rotated or truncated file is read from its start again: it is
    // shorter than `offset`, or its first bytes are not those seen before.
    struct Position
    {
        qint64 offset = 0;
        QByteArray head; // the file's first bytes when last read
        QByteArray partial; // a last line still without its newline
    };

    // Where the file ends now: a reader that starts there shows only lines written from now on.
    static Position endOf(const QString &runDir);
    // The complete lines appended since `pos` (at most MaxBytes of them), advancing it.
    static std::vector<Line> readNew(const QString &runDir, Position *pos);
};

} // namespace ak
