#include "llmprobe.h"

#include "jsonfield.h"
#include "llmagent.h"
#include "llmclient.h"
#include "llmprotocol.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>

#include <nlohmann/json.hpp>

namespace ak {

namespace {

using nlohmann::json;

// GET `url` with the request's headers (key, same-origin redirects); the body when 2xx, else empty.
json getJson(const LlmRequest &request, const QUrl &url)
{
    QNetworkAccessManager nam;
    QNetworkRequest nr = LlmProtocol::networkRequest(request);
    nr.setUrl(url);
    nr.setRawHeader("Accept", QByteArrayLiteral("application/json"));
    nr.setTransferTimeout(10000);
    QNetworkReply *reply = nam.get(nr);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(15000, &loop, [reply] { reply->abort(); });
    if (!reply->isFinished())
        loop.exec();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = reply->readAll();
    delete reply;
    if (status < 200 || status >= 300)
        return json();
    return json::parse(body.constData(), body.constData() + body.size(), nullptr, false);
}

QString withoutSuffix(QString url, const QString &suffix)
{
    if (url.endsWith(suffix))
        url.chop(suffix.size());
    return url;
}

} // namespace

LlmCheck LlmProbe::check(const LlmRequest &request)
{
    LlmCheck out;
    const QUrl endpoint = LlmProtocol::endpoint(request);
    const bool anthropic = request.protocol == LlmRequest::Protocol::Anthropic;
    const QString base = withoutSuffix(
        endpoint.toString(), anthropic ? QStringLiteral("/messages") : QStringLiteral("/chat/completions"));

    // The models the server lists, and vLLM's max_model_len for ours.
    const json models = getJson(request, QUrl(base + QStringLiteral("/models")));
    if (const json *data = models.is_object() && models.contains("data") && models["data"].is_array()
            ? &models["data"]
            : nullptr) {
        QStringList ids;
        for (const json &m : *data) {
            const QString id = jsonfield::text(m, "id");
            ids << id;
            if (id == request.model && m.contains("max_model_len")
                && m["max_model_len"].is_number_integer()) {
                out.contextTokens = m["max_model_len"].get<int>();
                out.findings << QStringLiteral("context length %1 tokens (the server's max_model_len)")
                                    .arg(out.contextTokens);
            }
        }
        out.findings << QStringLiteral("the server lists %1 model(s): %2")
                            .arg(ids.size())
                            .arg(ids.mid(0, 8).join(QStringLiteral(", ")));
        if (!ids.isEmpty() && !request.model.isEmpty() && !ids.contains(request.model))
            out.warnings << QStringLiteral("model \"%1\" is not among them").arg(request.model);
    }
    // llama.cpp's server says its context at /props (next to /v1).
    if (!anthropic && out.contextTokens == 0) {
        QUrl props = endpoint;
        props.setPath(QStringLiteral("/props"));
        const json p = getJson(request, props);
        const json settings = p.is_object() && p.contains("default_generation_settings")
            ? p["default_generation_settings"]
            : p;
        if (settings.is_object() && settings.contains("n_ctx") && settings["n_ctx"].is_number_integer()) {
            out.contextTokens = settings["n_ctx"].get<int>();
            out.findings
                << QStringLiteral("context length %1 tokens (llama.cpp's n_ctx)").arg(out.contextTokens);
        }
    }
    if (out.contextTokens > 0 && out.contextTokens < TypicalPromptTokens + request.maxTokens)
        out.warnings << QStringLiteral(
            "a context of %1 tokens is smaller than a run's prompt (about %2) plus max_tokens %3: "
            "raise the server's context or lower run.json's agent.max_tokens")
                            .arg(out.contextTokens)
                            .arg(TypicalPromptTokens)
                            .arg(request.maxTokens);

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
