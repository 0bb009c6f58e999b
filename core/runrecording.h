#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QString>

namespace ak {

// A run directory as one text file and back. A recording (JSON, text only) holds the run's files
// (run.json, profile.json, verification.json, experiments.jsonl), every blob, tree and commit reachable
// from its refs, and the refs themselves (kernel heads, best, every experiment, the agent replies).
// Restoring writes the objects again through libgit2: every commit must come back with the id it was
// recorded under (RunStore's commits have a fixed author, so they do), which proves the copy whole
// and keeps the log's commit ids valid. This is how a real GPU run ships with the app as text files
// and opens on any machine, marked as a recording (MarkerFile) so that the window says so.
class RunRecording
{
public:
    struct Info
    {
        QString device; // the run's device, "NVIDIA H200"
        QString model; // run.json's model
        QDateTime recorded; // when the recording was made
        QString note; // what the recorder said about it
        int experiments = 0;
        QString summary() const; // "a recording of a gpt2 run on NVIDIA H200 (2026-12-05)"
    };

    // Writes the run in `runDir` to `outFile`. Refuses, naming the object and its path, a file that is
    // not UTF-8 text (a recording is text only); refuses a directory that is not a run.
    static bool write(const QString &runDir, const QString &outFile, const QString &note, QString *error);
    // Recreates the run of `recording` (read from `sourceName`, for messages) in `runDir`, which must
    // not exist or be empty. Errors name the field or object; a failed restore removes what it made.
    static bool restore(
        const QByteArray &recording, const QString &sourceName, const QString &runDir, QString *error);
    // The run in `runDir` was restored from a recording: its Info (from MarkerFile).
    static bool isRecording(const QString &runDir, Info *info = nullptr);
    // The Info of a recording file without restoring it.
    static bool peek(const QByteArray &recording, Info *info, QString *error);

    static constexpr const char *MarkerFile = ".git/autokernel-recording.json";
    static constexpr const char *Format = "autokernel-recording";
    static constexpr int Version = 1;
};

} // namespace ak
