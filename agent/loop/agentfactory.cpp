#include "loop/agentfactory.h"

#include "agents/commandagent.h"
#include "agents/tuneagent.h"
#include "llm/llmagent.h"

namespace ak {

std::unique_ptr<Agent> createAgent(const AgentConfig &config, const AgentInputs &inputs, QString *error)
{
    switch (config.kind) {
    case AgentConfig::Kind::Tune:
        return std::make_unique<TuneAgent>(quint64(config.seed));
    case AgentConfig::Kind::Llm: {
        auto agent = std::make_unique<LlmAgent>(config, inputs.apiKey, inputs.prices);
        if (const QString why = agent->configurationError(); !why.isEmpty()) {
            *error = why;
            return nullptr;
        }
        return agent;
    }
    case AgentConfig::Kind::Command: {
        QString why;
        if (CommandAgent::expand(config.commandTemplate, {}, &why).isEmpty()) {
            *error = why;
            return nullptr;
        }
        return std::make_unique<CommandAgent>(config);
    }
    case AgentConfig::Kind::Replay:
        if (inputs.recorded.isEmpty()) {
            *error = config.replayRun.isEmpty()
                ? QStringLiteral("no recorded run to replay is set")
                : QStringLiteral("the run %1 has no proposals to replay").arg(config.replayRun);
            return nullptr;
        }
        return std::make_unique<ReplayAgent>(inputs.recorded);
    }
    *error = QStringLiteral("unknown agent kind");
    return nullptr;
}

} // namespace ak
