#include "agentflags.h"

#include "agents/agentconfig.h"
#include "runsnapshot.h"

#include <QCommandLineParser>

namespace ak::cli {

bool agentOfRun(const RunSnapshot &run, AgentConfig *config, QString *error)
{
    if (AgentConfig::fromRun(run.config, config, error))
        return true;
    *error = QStringLiteral("%1/run.json: %2").arg(run.runDir, *error);
    return false;
}

void applyAgentFlags(const QCommandLineParser &p, AgentConfig *config)
{
    const struct
    {
        const char *option;
        QString AgentConfig::*field;
    } strings[] = { { "protocol", &AgentConfig::llmProtocol }, { "base-url", &AgentConfig::baseUrl },
        { "model", &AgentConfig::model }, { "api-key-env", &AgentConfig::apiKeyEnv },
        { "command", &AgentConfig::commandTemplate }, { "replay", &AgentConfig::replayRun } };
    // optionNames(): what was given; asking isSet() of an option a command does not declare warns.
    const QStringList given = p.optionNames();
    for (const auto &s : strings)
        if (given.contains(QLatin1String(s.option)))
            config->*s.field = p.value(QLatin1String(s.option));
}

} // namespace ak::cli
