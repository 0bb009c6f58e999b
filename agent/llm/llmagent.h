#pragma once

#include "agents/agent.h"
#include "agents/agentconfig.h"
#include "llm/llmlimits.h"
#include "llm/llmpricing.h"
#include "llm/llmrequest.h"

#include <optional>

namespace ak {

struct ParsedReply;

// Asks a chat model for a new kernel.py: system prompt = program.md, user prompt = the kernel's
// context (AgentContext::prompt). The reply must carry a DESCRIPTION line and one fenced python block
// (ReplyParser); anything else is an AgentError of kind BadReply with the raw reply kept.
//
// The API key is resolved once at construction: the key passed in (the user's settings store) or
// else the environment variable config.apiKeyEnv. It lives in memory only and is redacted from every
// error message. A key is required only for the public endpoints (api.openai.com, api.anthropic.com).
class LlmAgent : public Agent
{
public:
    LlmAgent(const AgentConfig &config, const QString &apiKey = QString(),
        const PriceTable &prices = PriceTable());

    QString name() const override;
    AgentResult propose(const AgentContext &context) override;

    // The request every proposal starts from (protocol, URL, limits). Tests shorten backoffs here.
    LlmRequest &requestDefaults() { return m_request; }
    // "" when the agent can run; otherwise why not ("no API key: set $ANTHROPIC_API_KEY ...").
    QString configurationError() const;
    // Why a failed request is a misconfiguration (a refused key, a wrong model or URL, a rejected
    // parameter, an exhausted quota, nothing listening), naming the setting; empty when it is not.
    static QString configurationCause(const LlmRequest &request, const LlmResponse &response);

private:
    AgentError error(AgentError::Kind kind, const QString &reason, bool retryable) const;
    static QString userPrompt(const AgentContext &context);
    // propose()'s steps. The limits' description the first time they are discovered, else "".
    QString discoverLimitsOnce();
    // Fits the prompt to the model's context (the compact playbook when the full one does not fit),
    // setting request's system prompt and max_tokens and adding to *note; why nothing fits, or "".
    QString fitPrompt(const AgentContext &context, LlmRequest *request, QString *note);
    // Why the response is no proposal (a failed request, a refusal, an empty or unusable reply, an
    // unchanged kernel), in that order; none with *parsed holding the reply.
    std::optional<AgentError> replyFailure(const LlmResponse &response, const LlmRequest &request,
        const AgentContext &context, ParsedReply *parsed) const;

    LlmRequest m_request;
    PriceTable m_prices;
    QString m_apiKeyEnv;
    QString m_configError;
    // The model's context and output limit, discovered at the first proposal (LlmLimits::discover)
    // unless run.json's agent.context_tokens gives the context.
    LlmLimits discoverLimits() const;
    int m_contextOverride = 0;
    bool m_limitsKnown = false;
    LlmLimits m_limits;
    bool m_compactNoted = false;
};

} // namespace ak
