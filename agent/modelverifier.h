#pragma once

#include "workerclient.h"

#include <nlohmann/json.hpp>

#include <QString>
#include <QStringList>

namespace ak {

struct RunSnapshot;

struct VerifyOptions
{
    QString runDir;
    QString python;          // empty: PythonLocator::forRun
    QString device;          // "cpu" | "cuda"; empty: the device the run was profiled on
    QStringList kernels;     // kernel folder names to consider; empty: every kernel of the run
    int seeds = 3;           // fresh seeded input draws for parity
    int rounds = 7;          // alternating timing rounds per comparison
    bool compile = true;     // also time torch.compile (max-autotune-no-cudagraphs) with and without
    bool allowChangedModel = false;
    int timeoutSec = 3600;
};

struct VerifyOutcome
{
    bool ok = false;
    bool environmentError = false;  // no Python, no worker, a model that cannot run: exit 2
    QString error;
    nlohmann::json verification;    // verification.json's object
    QString recorded;               // how it was recorded: "committed" or "queued for the loop"
};

// `autokernel-cli verify`, the window's Verify and `run --verify-at-end`: the run's kept kernels put
// back into the model at their recorded call sites by the worker's `verify` op
// (agent/python/modelplug/verify.py), parity and timings measured there, the result recorded in the
// run (verification.json, committed on the best branch) with what an earlier verification found.
class ModelVerifier
{
public:
    // The worker's args; empty with `error` set when the run cannot be verified as asked.
    static nlohmann::json requestArgs(const RunSnapshot &run, const VerifyOptions &options, QString *error);
    static VerifyOutcome verify(const VerifyOptions &options, const WorkerClient::ProgressFn &progress = {});
    // Commits verification.json through the run store, or queues it for the process writing the run.
    static bool record(const QString &runDir, const nlohmann::json &verification, QString *how, QString *error);
    // "bf16" -> "bfloat16"; the names torch uses.
    static QString torchDtype(const QString &shortName);
};

} // namespace ak
