#include "llm/llmprotocol.h"

#include "enumnames.h"
#include "jsonfield.h"

#include <QRegularExpression>
#include <QUrlQuery>
#include <nlohmann/json.hpp>

using nlohmann::json;

namespace ak {
namespace {

const QString kOpenAiBase = QStringLiteral("https://api.openai.com/v1");
const QString kAnthropicBase = QStringLiteral("https://api.anthropic.com");

std::string utf8(const QString &s)
{
    return s.toStdString();
}

// Never throws: a missing key or a non-object gives null (replies from other servers vary).
json sub(const json &j, const char *key)
{
    if (!j.is_object())
        return json();
    const auto it = j.find(key);
    return it == j.end() ? json() : *it;
}

// A reasoning model's thoughts in an OpenAI-style message or delta: vLLM and DeepSeek send
// `reasoning_content`, newer vLLM, OpenRouter and llama.cpp `reasoning` (one of the two, not both).
QString reasoningOf(const json &message)
{
    const QString content = jsonfield::text(message, "reasoning_content");
    return content.isEmpty() ? jsonfield::text(message, "reasoning") : content;
}

// Token counts are whole numbers, but replies from other servers vary: a float one still counts,
// truncated toward zero (an integer is read exactly, a float through the double).
qint64 count(const json &j, const char *key)
{
    return jsonfield::integer(j, key, qint64(jsonfield::number(j, key, 0)));
}

QString oneLine(QString s, int max = 300)
{
    s.replace(QLatin1Char('\n'), QLatin1Char(' '));
    s.replace(QLatin1Char('\r'), QLatin1Char(' '));
    s = s.simplified();
    if (s.size() > max)
        s = s.left(max) + QStringLiteral("...");
    return s;
}

QString errorOf(const json &j)
{
    // vLLM's error bodies are flat: {"object":"error","message":...,"type":"BadRequestError","code":400}.
    if (j.is_object() && jsonfield::text(j, "object") == QLatin1String("error")) {
        const QString msg = jsonfield::text(j, "message");
        const QString type = jsonfield::text(j, "type");
        return type.isEmpty() ? msg : type + QStringLiteral(": ") + msg;
    }
    if (!j.is_object() || !j.contains("error"))
        return QString();
    const json &e = j["error"];
    if (e.is_string())
        return QString::fromStdString(e.get<std::string>());
    QString msg = jsonfield::text(e, "message");
    const QString type = jsonfield::text(e, "type");
    if (msg.isEmpty())
        msg = QString::fromStdString(e.dump());
    return type.isEmpty() ? msg : type + QStringLiteral(": ") + msg;
}

void anthropicUsage(const json &usage, LlmResponse *out)
{
    if (!usage.is_object())
        return;
    // Cached prompt tokens are still prompt tokens; the price table has one input price.
    const qint64 in = count(usage, "input_tokens") + count(usage, "cache_creation_input_tokens")
        + count(usage, "cache_read_input_tokens");
    if (in > 0)
        out->tokensIn = in;
    if (usage.contains("output_tokens"))
        out->tokensOut = count(usage, "output_tokens");
}

void openAiUsage(const json &usage, LlmResponse *out)
{
    if (!usage.is_object())
        return;
    out->tokensIn = count(usage, "prompt_tokens");
    out->tokensOut = count(usage, "completion_tokens");
}

// run.json's "protocol" and --protocol; the API's own names are accepted too.
constexpr EnumToken<LlmRequest::Protocol> kProtocolNames[] = {
    { LlmRequest::Protocol::OpenAi, "openai" },
    { LlmRequest::Protocol::OpenAi, "chat-completions" },
    { LlmRequest::Protocol::Anthropic, "anthropic" },
    { LlmRequest::Protocol::Anthropic, "messages" },
};
} // namespace

QString LlmProtocol::name(LlmRequest::Protocol p)
{
    return tokenOf(kProtocolNames, p);
}

bool LlmProtocol::parse(const QString &text, LlmRequest::Protocol *out)
{
    return fromToken(kProtocolNames, text.trimmed().toLower(), out);
}

QUrl LlmProtocol::endpoint(const LlmRequest &request)
{
    const bool anthropic = request.protocol == LlmRequest::Protocol::Anthropic;
    QString base = request.baseUrl.trimmed();
    if (base.isEmpty())
        base = anthropic ? kAnthropicBase : kOpenAiBase;
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    if (anthropic) {
        if (base.endsWith(QLatin1String("/messages")))
            return QUrl(base);
        return QUrl(base.endsWith(QLatin1String("/v1")) ? base + QStringLiteral("/messages")
                                                        : base + QStringLiteral("/v1/messages"));
    }
    if (base.endsWith(QLatin1String("/chat/completions")))
        return QUrl(base);
    return QUrl(base + QStringLiteral("/chat/completions"));
}

bool LlmProtocol::isPublicCloud(const LlmRequest &request)
{
    const QString host = endpoint(request).host().toLower();
    return host == QLatin1String("api.openai.com") || host == QLatin1String("api.anthropic.com");
}

QNetworkRequest LlmProtocol::networkRequest(const LlmRequest &request)
{
    QNetworkRequest r(endpoint(request));
    r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    r.setRawHeader("Accept",
        request.stream ? QByteArrayLiteral("text/event-stream") : QByteArrayLiteral("application/json"));
    // Same origin only: the key travels in a header, and a redirect to another host must not carry it.
    r.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::SameOriginRedirectPolicy);
    if (request.protocol == LlmRequest::Protocol::Anthropic) {
        r.setRawHeader("anthropic-version", QByteArrayLiteral("2023-06-01"));
        if (!request.apiKey.isEmpty())
            r.setRawHeader("x-api-key", request.apiKey.toUtf8());
    } else if (!request.apiKey.isEmpty()) {
        r.setRawHeader("Authorization", QByteArrayLiteral("Bearer ") + request.apiKey.toUtf8());
    }
    return r;
}

QByteArray LlmProtocol::body(const LlmRequest &request)
{
    json j;
    j["model"] = utf8(request.model);
    const bool completion = request.maxCompletionTokens && request.protocol == LlmRequest::Protocol::OpenAi;
    j[completion ? "max_completion_tokens" : "max_tokens"] = request.maxTokens;
    if (request.temperature >= 0)
        j["temperature"] = request.temperature;
    j["stream"] = request.stream;
    if (request.protocol == LlmRequest::Protocol::Anthropic) {
        if (!request.system.isEmpty())
            j["system"] = utf8(request.system);
        j["messages"] = json::array({ { { "role", "user" }, { "content", utf8(request.user) } } });
    } else {
        json messages = json::array();
        if (!request.system.isEmpty())
            messages.push_back({ { "role", "system" }, { "content", utf8(request.system) } });
        messages.push_back({ { "role", "user" }, { "content", utf8(request.user) } });
        j["messages"] = messages;
        if (request.stream)
            j["stream_options"] = { { "include_usage", true } }; // usage arrives in the last chunk
    }
    return QByteArray::fromStdString(j.dump());
}

bool LlmProtocol::parseBody(LlmRequest::Protocol p, const QByteArray &body, LlmResponse *out)
{
    const json j = json::parse(body.constData(), body.constData() + body.size(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        out->error = QStringLiteral("the reply is not JSON: ") + oneLine(QString::fromUtf8(body), 120);
        return false;
    }
    if (const QString e = errorOf(j); !e.isEmpty()) {
        out->error = oneLine(e);
        return false;
    }
    if (p == LlmRequest::Protocol::Anthropic) {
        if (!j.contains("content") || !j["content"].is_array()) {
            out->error = QStringLiteral("the reply has no \"content\" array");
            return false;
        }
        QString text;
        for (const json &block : j["content"]) {
            const QString type = jsonfield::text(block, "type");
            if (type == QLatin1String("text"))
                text += jsonfield::text(block, "text");
            else if (type == QLatin1String("thinking"))
                out->reasoning += jsonfield::text(block, "thinking");
        }
        out->text = text;
        out->stopReason = jsonfield::text(j, "stop_reason");
        anthropicUsage(sub(j, "usage"), out);
        return true;
    }
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) {
        out->error = QStringLiteral("the reply has no \"choices\"");
        return false;
    }
    const json &choice = j["choices"][0];
    const json message = sub(choice, "message");
    out->text = jsonfield::text(message, "content");
    out->reasoning = reasoningOf(message);
    out->refusal = jsonfield::text(message, "refusal");
    out->stopReason = jsonfield::text(choice, "finish_reason");
    openAiUsage(sub(j, "usage"), out);
    return true;
}

bool LlmProtocol::applyEvent(LlmRequest::Protocol p, const SseEvent &event, LlmResponse *out, bool *done)
{
    const QByteArray data = event.data.trimmed();
    if (p == LlmRequest::Protocol::OpenAi && data == "[DONE]") {
        *done = true;
        return true;
    }
    if (data.isEmpty())
        return true;
    const json j = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        out->error = QStringLiteral("unreadable stream event: ") + oneLine(QString::fromUtf8(data), 120);
        return false;
    }
    if (const QString e = errorOf(j); !e.isEmpty()) {
        out->error = oneLine(e);
        return false;
    }
    if (p == LlmRequest::Protocol::Anthropic) {
        const QString type = jsonfield::text(j, "type");
        if (type == QLatin1String("message_start")) {
            anthropicUsage(sub(sub(j, "message"), "usage"), out);
        } else if (type == QLatin1String("content_block_delta")) {
            const json delta = sub(j, "delta");
            const QString type = jsonfield::text(delta, "type");
            if (type == QLatin1String("text_delta"))
                out->text += jsonfield::text(delta, "text");
            else if (type == QLatin1String("thinking_delta"))
                out->reasoning += jsonfield::text(delta, "thinking");
        } else if (type == QLatin1String("message_delta")) {
            out->stopReason = jsonfield::text(sub(j, "delta"), "stop_reason");
            anthropicUsage(sub(j, "usage"), out);
        } else if (type == QLatin1String("message_stop")) {
            *done = true;
        }
        return true;
    }
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
        const json &choice = j["choices"][0];
        const json delta = sub(choice, "delta");
        out->text += jsonfield::text(delta, "content");
        out->reasoning += reasoningOf(delta);
        out->refusal += jsonfield::text(delta, "refusal");
        if (const QString r = jsonfield::text(choice, "finish_reason"); !r.isEmpty())
            out->stopReason = r;
    }
    if (j.contains("usage"))
        openAiUsage(j["usage"], out);
    return true;
}

QString LlmProtocol::secretInUrl(const QUrl &url)
{
    if (!url.password().isEmpty())
        return QStringLiteral("a password before the host");
    static const QRegularExpression secretName(
        QStringLiteral("^(api[-_]?key|key|token|access[-_]?token|auth|authorization|secret|sig|signature|"
                       "password|pass|x[-_]api[-_]key)$"),
        QRegularExpression::CaseInsensitiveOption);
    for (const auto &item : QUrlQuery(url).queryItems())
        if (secretName.match(item.first).hasMatch() && !item.second.isEmpty())
            return QStringLiteral("a query parameter '%1'").arg(item.first);
    return QString();
}

QString LlmProtocol::errorMessage(const QByteArray &body)
{
    const json j = json::parse(body.constData(), body.constData() + body.size(), nullptr, false);
    if (!j.is_discarded()) {
        if (const QString e = errorOf(j); !e.isEmpty())
            return oneLine(e);
    }
    const QString text = QString::fromUtf8(body).trimmed();
    return oneLine(text.section(QLatin1Char('\n'), 0, 0), 200);
}

} // namespace ak
