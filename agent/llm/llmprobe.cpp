#include "llm/llmprobe.h"

#include "llm/llmagent.h"
#include "llm/llmclient.h"
#include "llm/llmlimits.h"
#include "llm/llmprotocol.h"

#include <QElapsedTimer>

#include <algorithm>

namespace ak {

QStringList LlmCheck::limitLines() const
{
    const QString context = contextTokens > 0
        ? QStringLiteral("context: %1 tokens (%2)").arg(contextTokens).arg(contextSource)
        : QStringLiteral("context: not reported by the server and not in the table of hosted models: "
                         "requests are not sized (run --context-tokens N sizes them)");
    const QString output = outputTokens > 0
        ? QStringLiteral("output limit: %1 tokens (%2); a run asks for max_tokens %3")
              .arg(outputTokens)
              .arg(outputSource)
              .arg(maxTokens)
        : QStringLiteral(
            "output limit: not reported (servers do not say it; the model is not in the table of "
            "hosted models); a run asks for max_tokens %1")
              .arg(maxTokens);
    return { context, output };
}

LlmCheck LlmProbe::check(const LlmRequest &request)
{
    LlmCheck out;
    // What the server (or the table of hosted models) says about the model's context and output.
    const LlmLimits limits = LlmLimits::discover(request);
    out.contextTokens = limits.contextTokens;
    out.contextSource = limits.source;
    out.outputTokens = limits.outputTokens;
    out.outputSource = limits.outputSource;
    out.maxTokens
        = limits.outputTokens > 0 ? std::min(request.maxTokens, limits.outputTokens) : request.maxTokens;
    out.findings = limits.findings;
    out.warnings = limits.warnings;
    if (out.contextTokens > 0 && out.contextTokens < TypicalPromptTokens + out.maxTokens)
        out.warnings << QStringLiteral(
            "a context of %1 tokens is smaller than a run's prompt (about %2) plus max_tokens %3: the run "
            "sends the compact playbook and fewer reply tokens; raise the server's context for the full one")
                            .arg(out.contextTokens)
                            .arg(TypicalPromptTokens)
                            .arg(out.maxTokens);

    // One small request through the agent's own client.
    LlmRequest small = request;
    small.system.clear();
    small.user = QStringLiteral("Reply with the single word OK.");
    small.maxTokens = 16;
    small.maxAttempts = 1;
    QElapsedTimer clock;
    clock.start();
    const LlmResponse r = LlmClient().send(small);
    if (r.switchedToMaxCompletionTokens)
        out.findings << QStringLiteral(
            "the model takes max_completion_tokens, not max_tokens: the agent switches by itself");
    if (r.ok) {
        out.ok = true;
        out.verdict = QStringLiteral("ok: %1 answered in %2 s (%3 tokens in, %4 out)")
                          .arg(request.model)
                          .arg(clock.elapsed() / 1000.0, 0, 'f', 1)
                          .arg(r.tokensIn)
                          .arg(r.tokensOut);
        return out;
    }
    const QString cause = LlmAgent::configurationCause(request, r);
    out.verdict = LlmClient::redact(cause.isEmpty() ? QStringLiteral("the request failed: %1").arg(r.error)
                                                    : cause + QStringLiteral(" — ") + r.error,
        request.apiKey);
    return out;
}

} // namespace ak
