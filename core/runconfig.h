#pragma once

#include "deviceinfo.h"
#include "moveonrules.h"

#include <nlohmann/json_fwd.hpp>

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace ak {

// run.json parsed once, when a run loads or its file changes, into what its readers use: the loop,
// verify, the CLI and the window read these fields instead of parsing the file again. The file's
// bytes stay on the snapshot (RunSnapshot::runJson) for the writer, which rewrites it key-order
// preserving. The format: docs/run-format.md.
struct RunConfig
{
    QString model; // "model": a bundled example's name or the model file as given
    QString modelPath; // "model_path": the model file profiled
    QString modelSha256; // "model_sha256": its hash then
    QString python; // "python": the interpreter the run was profiled with
    QString activity; // "activity": what the profile measured, "cpu" | "cuda"
    QString dtype; // "dtype": "bf16", "fp32", ...
    // "device"; in a loaded snapshot with the measured roofs of roofs.json when run.json has none
    DeviceInfo device;
    bool reviewMode = false; // "settings.review_mode" as written; the log's review changes come on top
    // "settings.allow_reduced_precision": a kernel that accumulates in fp16/bf16 or reads fp32 as TF32,
    // where the PyTorch reference does not, is kept (flagged) instead of refused (docs/harness.md).
    bool allowReducedPrecision = false;
    MoveOnRules moveOn; // "move_on"; the defaults when absent or malformed
    QString moveOnWarning; // why the defaults stand in for a malformed "move_on"; empty otherwise
    QByteArray agentJson; // the "agent" section as JSON text (AgentConfig::fromJson); empty: none
    // "worker": where the loop's workers start (docs/remote.md). launcher: a command prefix such as
    // "ssh gpu1" (empty: local child processes, unless slurm); python: the interpreter on that side.
    QString workerLauncher;
    QString workerPython;
    QString workerSlurm; // "slurm": salloc's arguments; a resume takes a new allocation with them
    qint64 workerSlurmJob = 0; // "slurm_job": the allocation its last writer took (shown, never reused)
    // Where the workers run, in words: "local", "through 'ssh gpu1'", "Slurm job 4242 (salloc ARGS)".
    QString workerSummary() const;

    // false with `error` ("run.json: not a JSON object") when `runJson` is not an object; `out` then
    // holds the defaults. A malformed "move_on" is not an error: its reason is in moveOnWarning.
    static bool parse(const QByteArray &runJson, RunConfig *out, QString *error = nullptr);
    // `runDir`/run.json read and parsed: for code that has a run's folder and no snapshot (a loop
    // thread between loads). False with `error` when the file cannot be read or is not an object.
    static bool read(const QString &runDir, RunConfig *out, QString *error = nullptr);

    // run.json with its "move_on" section replaced (or added) and secrets stripped, every other key
    // in its order; empty with *error when `runJson` is not a JSON object.
    static QByteArray withMoveOn(
        const QByteArray &runJson, const MoveOnRules &rules, QString *error = nullptr);

    // run.json with its `key` section replaced (or added where sorting puts it) and secrets
    // stripped, every other key in its order; empty with *error when `runJson` is not an object.
    static QByteArray withSection(
        const QByteArray &runJson, const char *key, const nlohmann::json &value, QString *error = nullptr);

    // A copy without credentials (API keys, tokens, passwords, at any depth); names of what was
    // removed go to `removed` ("agent.api_key").
    static nlohmann::json stripSecrets(const nlohmann::json &config, QStringList *removed = nullptr);
};

} // namespace ak
