#pragma once

#include "llm/llmrequest.h"
#include "llm/ssedecoder.h"

#include <QByteArray>
#include <QNetworkRequest>
#include <QUrl>

namespace ak {

// The two wire formats: OpenAI Chat Completions (also vLLM, llama.cpp's server, Ollama, LM Studio
// through a base URL) and the Anthropic Messages API. Pure functions, no network: LlmClient sends.
class LlmProtocol
{
public:
    static QString name(LlmRequest::Protocol p);
    // "openai" / "chat-completions", "anthropic" / "messages".
    static bool parse(const QString &text, LlmRequest::Protocol *out);

    // "https://api.openai.com/v1" + "/chat/completions"; "https://api.anthropic.com" + "/v1/messages".
    // A base URL that already ends with the endpoint path is used as is.
    static QUrl endpoint(const LlmRequest &request);
    static bool isPublicCloud(const LlmRequest &request);
    static QNetworkRequest networkRequest(const LlmRequest &request);
    static QByteArray body(const LlmRequest &request);

    // A whole JSON reply (non-streaming, or a server that ignored "stream"). False with
    // out->error set when the body is not a reply of the protocol.
    static bool parseBody(LlmRequest::Protocol p, const QByteArray &body, LlmResponse *out);
    // One server-sent event of a streamed reply: text and usage accumulate in *out. Returns false
    // with out->error set on an error event or an unreadable one; *done on the final event.
    static bool applyEvent(LlmRequest::Protocol p, const SseEvent &event, LlmResponse *out, bool *done);
    // The message of an error body ({"error": {"message": ...}}), else the body's first line.
    static QString errorMessage(const QByteArray &body);

    // What in a base URL looks like a secret — a password, or a query parameter named like a key or
    // token — in words without the value ("a query parameter 'api_key'"); empty when nothing does.
    // Such a URL is refused: it would be written into run.json and the log.
    static QString secretInUrl(const QUrl &url);
};

} // namespace ak
