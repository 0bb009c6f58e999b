#pragma once

#include <QString>
#include <QStringList>

namespace ak {

// How a run's agent is configured (stored in run.json). Never holds a secret: for the LLM agent only
// the *name* of the environment variable or settings key that holds the API key is recorded.
struct AgentConfig
{
    enum class Kind { Tune, Llm, Command, Replay };
    Kind kind = Kind::Tune;
    QString llmProtocol = QStringLiteral("openai"); // "openai" (Chat Completions) or "anthropic" (Messages)
    QString baseUrl;
    QString model;
    QString apiKeyEnv;       // e.g. "OPENAI_API_KEY"
    QString commandTemplate; // e.g. "mytool --prompt-file {prompt} --workdir {dir}"
    QString replayRun;       // run directory whose proposals are replayed
    int seed = 0;

    static QString kindName(Kind k);
    static bool parseKind(const QString &text, Kind *out);
    static QStringList kindNames();
};

} // namespace ak
