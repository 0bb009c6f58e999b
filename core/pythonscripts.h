#pragma once

#include <QString>
#include <QStringList>

namespace ak {

// The product's Python files (worker, harness, profiler, bundled examples) travel inside the binary as
// Qt resources under :/autokernel/python/ and are extracted once per content version to
// $XDG_CACHE_HOME/autokernel/python-<hash>/, which the worker then runs from. The hash covers every
// file's path and bytes, so two builds never share a directory unless their Python is identical.
class PythonScripts
{
public:
    // The extracted directory (absolute), extracting it first if needed. Thread-safe; the result is
    // cached for the life of the process. Returns an empty string and sets *error on failure.
    static QString directory(QString *error = nullptr);

    // Extracts into `cacheRoot` (the directory that will hold python-<hash>/). Extraction goes to a
    // temporary sibling that is renamed into place, so a reader never sees a half-written tree and two
    // processes extracting at once both end up with the same complete directory.
    static QString extractTo(const QString &cacheRoot, QString *error = nullptr);

    // Resource-relative paths, sorted ("akworker.py", "harness/bench.py", ...).
    static QStringList files();

    // First 16 hex digits of SHA-256 over every file's relative path and contents.
    static QString contentHash();

    // Every file as the remote bootstrap (akboot.py) takes it: qCompress'd JSON {path: base64 bytes}.
    // Built once per process (a few hundred kilobytes).
    static QByteArray bundle();

    // akboot.py's source, run with `python -c` on the far side of a launcher (WorkerLauncher).
    static QString bootstrapSource();

    // Where directory() extracts to: $XDG_CACHE_HOME/autokernel (or ~/.cache/autokernel).
    static QString defaultCacheRoot();

    static constexpr const char *kResourceRoot = ":/autokernel/python";
};

} // namespace ak
