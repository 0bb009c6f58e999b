#pragma once

#include <QByteArray>
#include <QString>

namespace ak {

// Durable file writes for the run directory. A reader (the GUI, another process) must never see a
// half-written run.json, and a power loss must never leave one: whole-file writes go to a temporary
// file in the same folder, are fsynced, renamed over the target and the folder is fsynced.
class AtomicFile
{
public:
    // Replaces `path` with `data` (creating missing parent folders).
    static bool write(const QString &path, const QByteArray &data, QString *error = nullptr);
    // Appends `data` with a single write() on an O_APPEND descriptor, then fsyncs. A concurrent reader
    // sees either nothing or the whole record; a kill can at worst leave a tail without its newline.
    static bool append(const QString &path, const QByteArray &data, QString *error = nullptr);
    // Makes a rename or file creation inside `dir` durable.
    static bool syncDirectory(const QString &dir, QString *error = nullptr);

    // Process-wide switch for generators and benchmarks that build throw-away runs: with it off no
    // fsync is issued (here or by libgit2 for repositories opened afterwards). On by default.
    static void setSyncEnabled(bool on);
    static bool syncEnabled();
};

} // namespace ak
