#pragma once

#include "agents/agent.h"
#include "agents/agentconfig.h"
#include "agents/replayagent.h"
#include "llm/llmpricing.h"

#include <memory>

namespace ak {

// What an agent needs besides its AgentConfig (which is stored in run.json and so holds no secret).
struct AgentInputs
{
    QString apiKey; // from the user's settings store; empty = $config.apiKeyEnv
    PriceTable prices; // from the user's settings
    QVector<RecordedProposal> recorded; // for the replay agent (run-store reader)
};

// Builds the agent a run is configured for. Returns null with *error set when it could not work at
// all (no model, no API key for a public endpoint, no command template, nothing to replay), so the
// CLI and the GUI can refuse to start with a clear reason instead of recording a failure per experiment.
std::unique_ptr<Agent> createAgent(const AgentConfig &config, const AgentInputs &inputs, QString *error);

} // namespace ak
