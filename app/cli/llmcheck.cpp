// autokernel-cli llm-check [RUN_DIR] [--protocol P] [--base-url URL] [--model NAME] [--api-key-env VAR]
// [--max-tokens N]: one small request to the LLM server a run would use, and what the server says
// about itself (its models, its context length and output limit, each with its source), before an overnight
// run finds a bad key, a wrong model or a context too small for the prompt. With RUN_DIR, run.json's agent is
// the starting point.
#include "clicommand.h"

#include "agentflags.h"
#include "agents/agentconfig.h"
#include "llm/llmagent.h"
#include "llm/llmprobe.h"
#include "runloader.h"

#include <QCommandLineParser>
#include <QTextStream>

namespace ak::cli {

int runLlmCheck(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Check the LLM server a run would use: one small request, its models, context length and "
        "output limit."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("RUN_DIR"),
        QStringLiteral("optional: start from this run's agent settings"), QStringLiteral("[RUN_DIR]"));
    p.addOptions({
        { QStringLiteral("protocol"), QStringLiteral("openai or anthropic"), QStringLiteral("P") },
        { QStringLiteral("base-url"),
            QStringLiteral("server base URL (vLLM, Ollama, llama.cpp, LM Studio, ...)"),
            QStringLiteral("URL") },
        { QStringLiteral("model"), QStringLiteral("model name"), QStringLiteral("NAME") },
        { QStringLiteral("api-key-env"), QStringLiteral("environment variable holding the API key"),
            QStringLiteral("VAR") },
        { QStringLiteral("max-tokens"), QStringLiteral("the output limit a run would ask for"),
            QStringLiteral("N") },
    });
    if (!p.parse(QStringList { QStringLiteral("autokernel-cli llm-check") } + args))
        return printUsageError(QStringLiteral("llm-check: ") + p.errorText());
    if (p.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << p.helpText();
        return 0;
    }
    AgentConfig config;
    config.kind = AgentConfig::Kind::Llm;
    if (p.positionalArguments().size() > 1)
        return printUsageError(QStringLiteral("llm-check: give at most one run directory"));
    if (p.positionalArguments().size() == 1) {
        QString error;
        const RunSnapshotPtr run = RunLoader::load(p.positionalArguments().first(), &error);
        if (!run)
            return printUsageError(error);
        if (!agentOfRun(*run, &config, &error))
            return printUsageError(error);
    }
    applyAgentFlags(p, &config);
    if (p.isSet(QStringLiteral("max-tokens")))
        config.maxTokens = p.value(QStringLiteral("max-tokens")).toInt();

    LlmAgent agent(config);
    QTextStream out(stdout);
    if (const QString why = agent.configurationError(); !why.isEmpty()) {
        QTextStream(stderr) << "autokernel-cli: llm-check: " << why << Qt::endl;
        return 2;
    }
    const LlmCheck check = LlmProbe::check(agent.requestDefaults());
    for (const QString &line : check.findings)
        out << line << '\n';
    for (const QString &line : check.limitLines())
        out << line << '\n';
    for (const QString &line : check.warnings)
        out << "warning: " << line << '\n';
    out << check.verdict << Qt::endl;
    return check.ok ? 0 : 2;
}

} // namespace ak::cli
