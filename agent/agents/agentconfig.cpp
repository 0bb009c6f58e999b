#include "agents/agentconfig.h"

#include "enumnames.h"
#include "runconfig.h"

#include <nlohmann/json.hpp>

namespace ak {

namespace {
// run.json's and --agent's names.
constexpr EnumToken<AgentConfig::Kind> kAgentKindNames[] = {
    { AgentConfig::Kind::Tune, "tune" },
    { AgentConfig::Kind::Llm, "llm" },
    { AgentConfig::Kind::Command, "command" },
    { AgentConfig::Kind::Replay, "replay" },
};
} // namespace

QString AgentConfig::kindName(Kind k)
{
    return tokenOf(kAgentKindNames, k);
}

QStringList AgentConfig::kindNames()
{
    return tokensOf(kAgentKindNames);
}

bool AgentConfig::parseKind(const QString &text, Kind *out)
{
    return fromToken(kAgentKindNames, text.trimmed().toLower(), out);
}

QByteArray AgentConfig::toJson() const
{
    nlohmann::json o { { "kind", kindName(kind).toStdString() }, { "protocol", llmProtocol.toStdString() },
        { "base_url", baseUrl.toStdString() }, { "model", model.toStdString() },
        { "api_key_env", apiKeyEnv.toStdString() }, { "command", commandTemplate.toStdString() },
        { "replay_run", replayRun.toStdString() }, { "seed", seed }, { "max_tokens", maxTokens },
        { "context_tokens", contextTokens }, { "temperature", temperature }, { "stream", stream },
        { "request_timeout_sec", requestTimeoutSec }, { "idle_timeout_sec", idleTimeoutSec },
        { "first_byte_timeout_sec", firstByteTimeoutSec }, { "max_attempts", maxAttempts },
        { "command_timeout_sec", commandTimeoutSec } };
    return QByteArray::fromStdString(o.dump(2));
}

bool AgentConfig::fromRun(const RunConfig &run, AgentConfig *out, QString *error)
{
    return run.agentJson.isEmpty() || fromJson(run.agentJson, out, error);
}

bool AgentConfig::fromJson(const QByteArray &text, AgentConfig *out, QString *error)
{
    const nlohmann::json o
        = nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
    auto fail = [error](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    if (!o.is_object())
        return fail(QStringLiteral("agent: expected an object"));
    AgentConfig c;
    auto str = [&o](const char *key, QString *field) {
        const auto it = o.find(key);
        if (it == o.end() || it->is_null())
            return true;
        if (!it->is_string())
            return false;
        *field = QString::fromStdString(it->get<std::string>());
        return true;
    };
    auto integer = [&o](const char *key, int *field) {
        const auto it = o.find(key);
        if (it == o.end() || it->is_null())
            return true;
        if (!it->is_number_integer())
            return false;
        *field = it->get<int>();
        return true;
    };
    QString kind = kindName(c.kind);
    if (!str("kind", &kind) || !parseKind(kind, &c.kind))
        return fail(
            QStringLiteral("agent.kind: expected one of %1").arg(kindNames().join(QStringLiteral(", "))));
    const struct
    {
        const char *key;
        QString *field;
    } strings[] = { { "protocol", &c.llmProtocol }, { "base_url", &c.baseUrl }, { "model", &c.model },
        { "api_key_env", &c.apiKeyEnv }, { "command", &c.commandTemplate }, { "replay_run", &c.replayRun } };
    for (const auto &f : strings)
        if (!str(f.key, f.field))
            return fail(QStringLiteral("agent.%1: expected a string").arg(QLatin1String(f.key)));
    const struct
    {
        const char *key;
        int *field;
    } ints[] = { { "seed", &c.seed }, { "max_tokens", &c.maxTokens }, { "context_tokens", &c.contextTokens },
        { "request_timeout_sec", &c.requestTimeoutSec }, { "idle_timeout_sec", &c.idleTimeoutSec },
        { "first_byte_timeout_sec", &c.firstByteTimeoutSec }, { "max_attempts", &c.maxAttempts },
        { "command_timeout_sec", &c.commandTimeoutSec } };
    for (const auto &f : ints)
        if (!integer(f.key, f.field))
            return fail(QStringLiteral("agent.%1: expected an integer").arg(QLatin1String(f.key)));
    if (const auto it = o.find("temperature"); it != o.end() && !it->is_null()) {
        if (!it->is_number())
            return fail(QStringLiteral("agent.temperature: expected a number"));
        c.temperature = it->get<double>();
    }
    if (const auto it = o.find("stream"); it != o.end() && !it->is_null()) {
        if (!it->is_boolean())
            return fail(QStringLiteral("agent.stream: expected true or false"));
        c.stream = it->get<bool>();
    }
    if (c.llmProtocol != QLatin1String("openai") && c.llmProtocol != QLatin1String("anthropic"))
        return fail(QStringLiteral("agent.protocol: expected \"openai\" or \"anthropic\", not \"%1\"")
                        .arg(c.llmProtocol));
    *out = c;
    return true;
}

} // namespace ak
