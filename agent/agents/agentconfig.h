#pragma once

#include <QString>
#include <QStringList>

namespace ak {

struct RunConfig;

// How a run's agent is configured (stored in run.json). Never holds a secret: for the LLM agent only
// the *name* of the environment variable or settings key that holds the API key is recorded.
struct AgentConfig
{
    enum class Kind { Tune, Llm, Command, Replay };
    Kind kind = Kind::Tune;
    QString llmProtocol = QStringLiteral("openai"); // "openai" (Chat Completions) or "anthropic" (Messages)
    QString baseUrl;
    QString model;
    QString apiKeyEnv; // e.g. "OPENAI_API_KEY"
    QString commandTemplate; // e.g. "mytool --prompt-file {prompt} --workdir {dir}"
    QString replayRun; // run directory whose proposals are replayed
    int seed = 0;

    // LLM agent: request limits (per attempt) and sampling. The price table and the key itself come
    // from the user's settings at run time, never from here.
    int maxTokens = 16384;
    // The model's context in tokens; 0: discovered from the server or the table of hosted models
    // (LlmLimits). Set it when the server does not say or says wrong (an Ollama default, a proxy).
    int contextTokens = 0;
    double temperature = -1; // < 0: the server's default
    bool stream = true;
    int requestTimeoutSec = 600;
    int idleTimeoutSec = 120; // between bytes, once the reply has started
    int firstByteTimeoutSec = 300; // until the reply's first byte (a non-streamed reply, a long think)
    int maxAttempts = 4; // 429 / 5xx / connection failures are retried with backoff
    // Command agent: the external command is killed after this long.
    int commandTimeoutSec = 1800;

    // run.json's "agent" object. Unknown keys are ignored (forward compatible); a wrong type or an
    // unknown kind is an error naming the field. A key that looks like a secret is never read or written.
    QByteArray toJson() const;
    static bool fromJson(const QByteArray &text, AgentConfig *out, QString *error);
    // The run's own agent: run.json's "agent" as RunConfig holds it, the one way any reader gets it.
    // True with *out untouched when the run names none; false with `error` (fromJson's) when malformed.
    static bool fromRun(const RunConfig &run, AgentConfig *out, QString *error);

    static QString kindName(Kind k);
    static bool parseKind(const QString &text, Kind *out);
    static QStringList kindNames();
};

} // namespace ak
