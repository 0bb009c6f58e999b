#pragma once

#include "agents/agentconfig.h"
#include "loop/localloop.h"

#include <QString>
#include <QStringList>

class QSettings;

namespace ak {

// What Loop ▸ Start runs, as chosen in Loop ▸ Agent… (AgentSettingsDialog): the agent, the devices
// and the Python interpreter. It lives in the user's settings store (QSettings, group "agent"), never
// in a run: the run directory, its git history and the log only ever see the agent's kind, model and
// URL and the *name* of the environment variable holding the key. A key typed into the dialog is kept
// in the settings file only (made readable by its owner only); the environment variable is the
// recommended source.
//
// Nothing saved (never chosen, or "Use the Run's Agent"): Start behaves as before, with run.json's
// "agent" (tune when absent) and the run's default device.
struct AgentSettings
{
    enum class KeySource { Environment, Stored };

    // kind, llmProtocol, baseUrl, model, apiKeyEnv, commandTemplate, replayRun, seed, contextTokens
    // (0: ask the server). The other request limits (max tokens, timeouts, ...) are not chosen here:
    // they come from run.json's "agent".
    AgentConfig agent;
    KeySource keySource = KeySource::Environment;
    QString apiKey; // KeySource::Stored only; the settings store is the only place it is written
    QStringList
        devices; // "cpu", "cuda", "cuda:0", ...; empty: "cuda" if the run was profiled on a GPU, else "cpu"
    QString python; // empty: $AUTOKERNEL_PYTHON, the run's interpreter, then auto-detection
    // Workers through a launcher ("ssh gpu1", "srun ..."; docs/remote.md); python is then the
    // interpreter's name there. Empty: run.json's "worker" section; "local": local workers.
    QString launcher;
    // The longest reply a request asks for; 0: run.json's agent.max_tokens (or the default) stands,
    // as run.json's other request limits do.
    int maxTokens = 0;

    // What is wrong, if anything. `field` is the object name of the dialog's widget ("model",
    // "baseUrl", "apiKeyEnv", "apiKey", "command", "replayRun", "devices", "python", "launcher"); `message`
    // starts with the field's label ("Model: ..."). Both empty when the settings can be used.
    struct Problem
    {
        QString field;
        QString message;
        bool isEmpty() const { return field.isEmpty(); }
    };
    Problem check() const;

    // OPENAI_API_KEY for "openai", ANTHROPIC_API_KEY for "anthropic".
    static QString defaultKeyEnv(const QString &protocol);
    // "cuda:0, cuda:1" -> {"cuda:0", "cuda:1"}; commas or spaces separate. Empty text: empty list.
    static bool parseDevices(const QString &text, QStringList *out, QString *error);
    // The run's own agent (run.json "agent"; tune when absent or unreadable), with the key from the
    // protocol's default environment variable when run.json names none.
    static AgentSettings fromRun(const RunConfig &run);

    // The settings store. load() is false (and *out untouched) when nothing was saved.
    static bool isSaved(QSettings &settings);
    static bool load(QSettings &settings, AgentSettings *out);
    // Writes the key only for KeySource::Stored; otherwise a key stored earlier is removed.
    void save(QSettings &settings) const;
    // Back to run.json's agent; a stored key is removed too.
    static void forget(QSettings &settings);

    // The options Loop ▸ Start runs with: these settings on top of run.json's "agent" (its request
    // limits kept), the devices, the interpreter, and the stored key in agentInputs (never in
    // `agent`, which is what a run could record).
    LoopOptions loopOptions(const QString &runDir) const;
    // What app/gui/main.cpp's factory calls: loopOptions(runDir) from the saved settings, or plain
    // LoopOptions{runDir} when nothing was saved.
    static LoopOptions loopOptions(const QString &runDir, QSettings &settings);

    // One line for the log and tooltips; never the key.
    QString summary() const;
};

} // namespace ak
