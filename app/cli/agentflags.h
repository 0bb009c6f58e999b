#pragma once

class QCommandLineParser;
class QString;

namespace ak {
struct AgentConfig;
struct RunSnapshot;
} // namespace ak

namespace ak::cli {

// The agent a command works with: the run's own (run.json's "agent"), then the command line's
// choices on top. `run` and `llm-check` share both steps, so a flag means the same in each.

// run.json's agent into `config` (untouched when the run has none); false with `error` naming
// RUN_DIR/run.json when it is malformed.
bool agentOfRun(const RunSnapshot &run, AgentConfig *config, QString *error);

// The text options the parser declares and the user gave (protocol, base-url, model, api-key-env,
// command, replay) over `config`.
void applyAgentFlags(const QCommandLineParser &p, AgentConfig *config);

} // namespace ak::cli
