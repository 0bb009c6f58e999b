#include "llm/llmagent.h"

#include "agents/contextprompt.h"
#include "llm/llmclient.h"
#include "llm/llmprotocol.h"
#include "llm/replyparser.h"
#include "secrets.h"

#include <QElapsedTimer>
#include <QUrl>

namespace ak {

LlmAgent::LlmAgent(const AgentConfig &config, const QString &apiKey, const PriceTable &prices)
    : m_prices(prices)
    , m_apiKeyEnv(config.apiKeyEnv.trimmed())
{
    if (!LlmProtocol::parse(config.llmProtocol, &m_request.protocol))
        m_configError = QStringLiteral("unknown LLM protocol \"%1\" (expected openai or anthropic)")
                            .arg(config.llmProtocol);
    m_request.baseUrl = config.baseUrl;
    m_request.model = config.model.trimmed();
    m_request.apiKey = apiKey;
    if (m_request.apiKey.isEmpty() && !m_apiKeyEnv.isEmpty())
        m_request.apiKey = qEnvironmentVariable(m_apiKeyEnv.toLocal8Bit().constData());
    // Known to the whole process from now on: no worker inherits it, no recorded text carries it.
    secrets::registerName(m_apiKeyEnv);
    secrets::registerValue(m_request.apiKey);
    m_request.maxTokens = config.maxTokens > 0 ? config.maxTokens : 16384;
    m_contextOverride = std::max(0, config.contextTokens);
    m_request.temperature = config.temperature;
    m_request.stream = config.stream;
    m_request.totalTimeoutMs = std::max(1, config.requestTimeoutSec) * 1000;
    m_request.idleTimeoutMs = std::max(1, config.idleTimeoutSec) * 1000;
    m_request.firstByteTimeoutMs = std::max(1, config.firstByteTimeoutSec) * 1000;
    m_request.maxAttempts = std::max(1, config.maxAttempts);

    if (m_configError.isEmpty() && m_request.model.isEmpty())
        m_configError = QStringLiteral("no model is set for the LLM agent");
    if (m_configError.isEmpty() && !LlmProtocol::endpoint(m_request).isValid())
        m_configError = QStringLiteral("the LLM base URL \"%1\" is not a valid URL").arg(config.baseUrl);
    if (const QString secret = LlmProtocol::secretInUrl(QUrl(config.baseUrl.trimmed()));
        m_configError.isEmpty() && !secret.isEmpty())
        m_configError
            = QStringLiteral("the LLM base URL carries a secret (%1): give the key through "
                             "--api-key-env or the agent settings' key, never in the URL (it would be "
                             "written into run.json and the log)")
                  .arg(secret);
}

QString LlmAgent::name() const
{
    return QStringLiteral("llm:") + m_request.model;
}

QString LlmAgent::configurationError() const
{
    if (!m_configError.isEmpty())
        return m_configError;
    if (m_request.apiKey.isEmpty() && LlmProtocol::isPublicCloud(m_request)) {
        const QString env = m_apiKeyEnv.isEmpty()
            ? (m_request.protocol == LlmRequest::Protocol::Anthropic ? QStringLiteral("ANTHROPIC_API_KEY")
                                                                     : QStringLiteral("OPENAI_API_KEY"))
            : m_apiKeyEnv;
        return QStringLiteral("no API key for %1: set $%2 or enter a key in the settings")
            .arg(LlmProtocol::endpoint(m_request).host(), env);
    }
    return QString();
}

AgentError LlmAgent::error(AgentError::Kind kind, const QString &reason, bool retryable) const
{
    AgentError e;
    e.kind = kind;
    e.reason = LlmClient::redact(reason, m_request.apiKey);
    e.retryable = retryable;
    return e;
}

namespace {

// The server's words for "the prompt plus max_tokens exceed the model's context" (llama.cpp old and
// new, vLLM, OpenAI, Anthropic), in lower case.
bool contextExceeded(const QString &error)
{
    const QString e = error.toLower();
    for (const char *words : { "context is full", "n_ctx", "exceed_context_size", "context size",
             "context length", "context window", "prompt is too long" })
        if (e.contains(QLatin1String(words)))
            return true;
    return false;
}

const QString kContextHint = QStringLiteral(
    "the prompt and max_tokens do not fit the model's context: start the server with a larger one "
    "(llama.cpp -c, vLLM --max-model-len, Ollama num_ctx) or lower max_tokens (run.json \"agent\")");

} // namespace

QString LlmAgent::configurationCause(const LlmRequest &request, const LlmResponse &response)
{
    // An error inside a 200 stream: the same request fails alike next time unless the server said it
    // is overloaded (retryable), so a too-small context or a rejected request pauses the loop.
    if (response.errorInStream) {
        if (response.retryable)
            return QString();
        if (contextExceeded(response.error))
            return kContextHint;
        const QString e = response.error.toLower();
        if (e.contains(QLatin1String("invalid_request_error"))
            || e.contains(QLatin1String("badrequesterror")))
            return QStringLiteral(
                "the server rejected the request's parameters: check the model and the agent's max_tokens "
                "(run.json \"agent\")");
        return QString();
    }
    const QString url = LlmProtocol::endpoint(request).toDisplayString();
    // Every request is redirected alike and the client follows same-origin redirects only: waiting
    // cannot help, the base URL must name where the server really answers.
    if (response.httpStatus >= 300 && response.httpStatus < 400)
        return QStringLiteral("the base URL redirects to another host: set --base-url to the final URL");
    switch (response.httpStatus) {
    case 401:
    case 403:
        return QStringLiteral(
            "the server refused the API key: check the key (--api-key-env, or Loop ▸ Agent…)");
    case 404:
        return QStringLiteral("model \"%1\" or endpoint %2 not found: check --model and --base-url")
            .arg(request.model, url);
    case 400:
    case 413:
    case 422:
        if (contextExceeded(response.error))
            return kContextHint;
        return QStringLiteral(
            "the server rejected the request's parameters: check the model and the agent's max_tokens "
            "(run.json \"agent\")");
    case 429:
        return response.retryable ? QString() : QStringLiteral("the account's quota is exhausted");
    case 0:
        // No HTTP answer after every attempt: nothing listens there (not a mid-reply drop).
        if (response.errorKind == AgentError::Kind::Network
            && response.error.contains(QLatin1String("request to")))
            return QStringLiteral("cannot reach the server at %1: is it running? (--base-url)").arg(url);
        return QString();
    default:
        return QString();
    }
}

LlmLimits LlmAgent::discoverLimits() const
{
    if (m_contextOverride <= 0)
        return LlmLimits::discover(m_request);
    LlmLimits limits = LlmLimits::fromTable(m_request.model);
    limits.contextTokens = m_contextOverride;
    limits.source = QStringLiteral("run.json agent.context_tokens");
    return limits;
}

QString LlmAgent::userPrompt(const AgentContext &context)
{
    return context.prompt.isEmpty() ? ContextPrompt::render(context) : context.prompt;
}

QString LlmAgent::discoverLimitsOnce()
{
    if (m_limitsKnown)
        return QString();
    m_limits = discoverLimits();
    m_limitsKnown = true;
    QString note;
    if (m_limits.contextTokens > 0)
        note = QStringLiteral("the model's context is %1 tokens (%2)")
                   .arg(m_limits.contextTokens)
                   .arg(m_limits.source);
    for (const QString &w : m_limits.warnings)
        note += (note.isEmpty() ? QString() : QStringLiteral("; ")) + w;
    return note;
}

QString LlmAgent::fitPrompt(const AgentContext &context, LlmRequest *request, QString *note)
{
    const int userTokens = LlmLimits::estimateTokens(request->user);
    const LlmLimits::Fit fit
        = m_limits.fit(m_request.maxTokens, userTokens + LlmLimits::estimateTokens(context.systemPrompt),
            context.compactSystemPrompt.isEmpty()
                ? 0
                : userTokens + LlmLimits::estimateTokens(context.compactSystemPrompt));
    if (!fit.error.isEmpty())
        return fit.error;
    request->system = fit.compact ? context.compactSystemPrompt : context.systemPrompt;
    request->maxTokens = fit.maxTokens;
    if (fit.compact && !m_compactNoted) {
        m_compactNoted = true;
        *note += (note->isEmpty() ? QString() : QStringLiteral("; "))
            + QStringLiteral(
                "the full playbook does not fit: the compact one is sent (rules, reply format, this "
                "op type's recipe), with max_tokens %1")
                  .arg(fit.maxTokens);
    }
    return QString();
}

std::optional<AgentError> LlmAgent::replyFailure(const LlmResponse &response, const LlmRequest &request,
    const AgentContext &context, ParsedReply *parsed) const
{
    if (!response.ok) {
        // A misconfiguration fails every kernel alike: it stops the loop (AgentError::Kind::Config)
        // instead of becoming failed experiments that mark kernel after kernel done.
        if (const QString why = configurationCause(m_request, response); !why.isEmpty())
            return error(AgentError::Kind::Config, why + QStringLiteral(" — ") + response.error, false);
        return error(response.errorKind, response.error, response.retryable);
    }
    // A refusal or a filtered reply is this proposal's failure, said as such (not "unusable reply").
    if (const QString declined = response.declined(); !declined.isEmpty())
        return error(AgentError::Kind::BadReply, declined, true);
    if (response.text.trimmed().isEmpty())
        return error(AgentError::Kind::BadReply,
            response.reasoning.trimmed().isEmpty()
                ? QStringLiteral("the model's reply is empty")
                : QStringLiteral(
                    "the model's reply is empty (it only reasoned: the output limit may be too small "
                    "for a reasoning model)"),
            true);

    *parsed = ReplyParser::parse(response.text);
    if (!parsed->ok) {
        QString why = QStringLiteral("unusable reply: ") + parsed->error;
        if (response.truncated())
            why += QStringLiteral(" (the reply was cut off at max_tokens %1)").arg(request.maxTokens);
        return error(AgentError::Kind::BadReply, why, true);
    }
    if (parsed->kernelPy.trimmed() == context.kernelPy.trimmed())
        return error(
            AgentError::Kind::NoChange, QStringLiteral("the model returned kernel.py unchanged"), true);
    return std::nullopt;
}

AgentResult LlmAgent::propose(const AgentContext &context)
{
    QElapsedTimer clock;
    clock.start();
    auto seconds = [&] { return double(clock.elapsed()) / 1000.0; };
    if (stopRequested())
        return cancelled(seconds());
    if (const QString why = configurationError(); !why.isEmpty())
        return finish(AgentResult::failure(error(AgentError::Kind::Config, why, false)), seconds());

    LlmRequest request = m_request;
    request.user = userPrompt(context);
    // Sized for the model it talks to: the prompt must fit its context with room for a whole reply,
    // else the compact playbook is sent, else nothing is (a configuration error, named).
    QString note = discoverLimitsOnce();
    if (const QString why = fitPrompt(context, &request, &note); !why.isEmpty())
        return finish(AgentResult::failure(error(AgentError::Kind::Config, why, false)), seconds());
    LlmClient client(stopFlag());
    const LlmResponse response = client.send(request);
    if (response.switchedToMaxCompletionTokens)
        m_request.maxCompletionTokens = true; // the next proposals ask in the server's terms at once

    AgentUsage usage;
    usage.note = note;
    usage.tokensIn = response.tokensIn;
    usage.tokensOut = response.tokensOut;
    usage.cost = m_prices.cost(m_request.model, response.tokensIn, response.tokensOut);
    usage.attempts = response.attempts;
    usage.seconds = seconds();

    // The reasoning is kept for review before the reply, marked, and never parsed: only text is.
    const QString raw = response.reasoning.trimmed().isEmpty()
        ? response.text
        : QStringLiteral("[reasoning — kept for review, not parsed]\n%1\n[reply]\n%2")
              .arg(response.reasoning.trimmed(), response.text);
    ParsedReply parsed;
    if (std::optional<AgentError> e = replyFailure(response, request, context, &parsed)) {
        e->usage = usage;
        e->rawReply = raw;
        return finish(AgentResult::failure(std::move(*e)), usage.seconds);
    }
    AgentProposal p;
    p.kernelPy = parsed.kernelPy;
    p.description = parsed.description;
    p.usage = usage;
    p.rawReply = raw;
    return finish(AgentResult::success(std::move(p)), usage.seconds);
}

} // namespace ak
