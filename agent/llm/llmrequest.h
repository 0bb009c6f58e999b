#pragma once

#include "agents/agentresult.h"

#include <QString>

namespace ak {

// One request to a chat model, protocol-neutral. Holds the API key in memory only: nothing in the
// LLM layer writes a request, its headers or the key anywhere.
struct LlmRequest
{
    enum class Protocol { OpenAi, Anthropic };
    Protocol protocol = Protocol::OpenAi;
    QString baseUrl; // empty = the protocol's public endpoint
    QString model;
    QString apiKey; // empty = no auth header (local servers)
    QString system;
    QString user;
    int maxTokens = 16384;
    // OpenAI's reasoning models refuse "max_tokens" and want "max_completion_tokens" (same meaning);
    // LlmClient switches by itself on the server's 400 that says so.
    bool maxCompletionTokens = false;
    double temperature = -1; // < 0: the server's default
    bool stream = true;
    int totalTimeoutMs = 600000; // per attempt, from sending to the last byte
    int idleTimeoutMs = 120000; // per attempt, longest silence between bytes once the reply started
    // Per attempt, longest wait for the reply's first byte (a non-streamed reply, a model that
    // thinks long before it streams); <= 0: idleTimeoutMs.
    int firstByteTimeoutMs = 600000;
    int maxAttempts = 4; // retries on 429, 5xx and connection failures
    int initialBackoffMs = 1000; // doubled per retry unless the server sends Retry-After
    int maxBackoffMs = 60000; // our own back-off's ceiling
    int maxRetryAfterMs = 900000; // the server's Retry-After is honoured up to this (15 min)
    // All attempts of one request and the waits between them: a retry whose wait would end past it
    // is not made (the failure goes to the loop, whose outage rule pauses it). 20 min: one long
    // Retry-After and a few attempts.
    int retryBudgetMs = 1200000;
};

struct LlmResponse
{
    bool ok = false;
    QString text; // the assistant's reply
    // What a reasoning model thought before it answered (OpenAI-style `reasoning_content` or
    // `reasoning`, Anthropic `thinking` blocks): kept for review beside the reply, never parsed as code.
    QString reasoning;
    QString refusal; // OpenAI's `refusal` field: the model declined, in its words
    QString stopReason; // "stop", "length", "end_turn", "max_tokens", ...
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    int httpStatus = 0; // of the last attempt; 0 when no HTTP answer arrived
    int attempts = 0;
    AgentError::Kind errorKind = AgentError::Kind::Network;
    QString error; // one line, redacted
    bool retryable = false;
    // The server reported the error inside a 200 stream (Anthropic's `error` event, llama.cpp's and
    // vLLM's `data: {"error": ...}`): httpStatus says nothing about it, the error's text does.
    bool errorInStream = false;
    bool switchedToMaxCompletionTokens = false; // the server asked for it: later requests should send it

    // The model declined or the server's content filter cut the reply: why, in words; else empty.
    QString declined() const
    {
        if (!refusal.trimmed().isEmpty())
            return QStringLiteral("the model refused: ") + refusal.simplified().left(300);
        if (stopReason == QLatin1String("refusal"))
            return QStringLiteral("the model refused (stop_reason refusal)");
        if (stopReason == QLatin1String("content_filter"))
            return QStringLiteral(
                "the server's content filter stopped the reply (finish_reason content_filter)");
        return QString();
    }

    // True when the model stopped because it hit max_tokens (a cut-off kernel.py).
    bool truncated() const
    {
        return stopReason == QLatin1String("length") || stopReason == QLatin1String("max_tokens");
    }
};

} // namespace ak
