#include "llm/llmlimits.h"

#include "jsonfield.h"
#include "llm/llmprotocol.h"

#include <QEventLoop>
#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace ak {

namespace {

using nlohmann::json;

// GET `url` (POST `body` when given) with the request's headers (key, same-origin redirects); the
// body when 2xx, else null. Discovery is best effort: a server that does not answer says nothing.
json fetchJson(const LlmRequest &request, const QUrl &url, const QByteArray &body = QByteArray())
{
    QNetworkAccessManager nam;
    QNetworkRequest nr = LlmProtocol::networkRequest(request);
    nr.setUrl(url);
    nr.setRawHeader("Accept", QByteArrayLiteral("application/json"));
    nr.setTransferTimeout(10000);
    QNetworkReply *reply = body.isEmpty() ? nam.get(nr) : nam.post(nr, body);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(15000, &loop, [reply] { reply->abort(); });
    if (!reply->isFinished())
        loop.exec();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray data = reply->readAll();
    delete reply;
    if (status < 200 || status >= 300)
        return json();
    return json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
}

int positiveInt(const json &object, const char *key)
{
    return int(std::clamp<qint64>(jsonfield::integer(object, key, 0), 0, std::numeric_limits<int>::max()));
}

QUrl withPath(QUrl url, const QString &path)
{
    url.setPath(path);
    url.setQuery(QString());
    return url;
}

// Ollama: the loaded model's context (/api/ps), else the model's num_ctx parameter (/api/show); a
// warning when Ollama answers but says neither (its default context is small and it cuts silently).
void ollama(const LlmRequest &request, const QUrl &endpoint, LlmLimits &out)
{
    const json ps = fetchJson(request, withPath(endpoint, QStringLiteral("/api/ps")));
    if (ps.is_object() && ps.contains("models") && ps["models"].is_array()) {
        for (const json &m : ps["models"]) {
            const QString name = jsonfield::text(m, "name"), model = jsonfield::text(m, "model");
            if ((name == request.model || model == request.model) && positiveInt(m, "context_length") > 0) {
                out.contextTokens = positiveInt(m, "context_length");
                out.source = QStringLiteral("Ollama's context_length of the loaded model");
                return;
            }
        }
    }
    const json show = fetchJson(request, withPath(endpoint, QStringLiteral("/api/show")),
        QByteArray::fromStdString(json { { "model", request.model.toStdString() } }.dump()));
    if (!show.is_object())
        return;
    static const QRegularExpression numCtx(QStringLiteral("(?:^|\\n)\\s*num_ctx\\s+(\\d+)"));
    const QRegularExpressionMatch m = numCtx.match(jsonfield::text(show, "parameters"));
    if (m.hasMatch()) {
        out.contextTokens = m.captured(1).toInt();
        out.source = QStringLiteral("the model's num_ctx in Ollama");
        return;
    }
    int trained = 0;
    if (show.contains("model_info") && show["model_info"].is_object())
        for (auto it = show["model_info"].begin(); it != show["model_info"].end(); ++it)
            if (QString::fromStdString(it.key()).endsWith(QLatin1String(".context_length"))
                && it->is_number_integer())
                trained = it->get<int>();
    out.warnings << QStringLiteral(
        "Ollama does not say the context it will give %1 (the model allows %2 tokens): its default is a few "
        "thousand and a longer prompt is cut without an error. Start it with OLLAMA_CONTEXT_LENGTH=32768, or "
        "set num_ctx in a Modelfile, or give the run agent.context_tokens")
                        .arg(request.model, trained > 0 ? QString::number(trained) : QStringLiteral("?"));
}

} // namespace

LlmLimits LlmLimits::fromTable(const QString &model)
{
    LlmLimits out;
    QFile f(QStringLiteral(":/autokernel/resources/llm-limits.json"));
    if (!f.open(QIODevice::ReadOnly))
        return out;
    const QByteArray data = f.readAll();
    const json table = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (!table.is_object() || !table.contains("models") || !table["models"].is_array())
        return out;
    // Dated names ("gpt-4o-2024-08-06") and provider prefixes ("openai/gpt-4o") match too.
    const QString name = model.section(QLatin1Char('/'), -1);
    qsizetype best = 0;
    for (const json &m : table["models"]) {
        const QString prefix = jsonfield::text(m, "prefix");
        if (!prefix.isEmpty() && name.startsWith(prefix) && prefix.size() > best) {
            best = prefix.size();
            out.contextTokens = positiveInt(m, "context");
            out.outputTokens = positiveInt(m, "output");
            out.source = QStringLiteral("the table of hosted models");
            out.outputSource = out.outputTokens > 0 ? out.source : QString();
        }
    }
    return out;
}

LlmLimits LlmLimits::discover(const LlmRequest &request)
{
    LlmLimits out;
    const QUrl endpoint = LlmProtocol::endpoint(request);
    const bool anthropic = request.protocol == LlmRequest::Protocol::Anthropic;
    QString base = endpoint.toString();
    const QString suffix = anthropic ? QStringLiteral("/messages") : QStringLiteral("/chat/completions");
    if (base.endsWith(suffix))
        base.chop(suffix.size());

    // The models the server lists, and vLLM's max_model_len for ours.
    const json models = fetchJson(request, QUrl(base + QStringLiteral("/models")));
    if (models.is_object() && models.contains("data") && models["data"].is_array()) {
        QStringList ids;
        for (const json &m : models["data"]) {
            const QString id = jsonfield::text(m, "id");
            ids << id;
            if (id == request.model && positiveInt(m, "max_model_len") > 0) {
                out.contextTokens = positiveInt(m, "max_model_len");
                out.source = QStringLiteral("the server's max_model_len");
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
        const json p = fetchJson(request, withPath(endpoint, QStringLiteral("/props")));
        const json settings = p.is_object() && p.contains("default_generation_settings")
            ? p["default_generation_settings"]
            : p;
        if (positiveInt(settings, "n_ctx") > 0) {
            out.contextTokens = positiveInt(settings, "n_ctx");
            out.source = QStringLiteral("llama.cpp's n_ctx");
        }
    }
    if (!anthropic && out.contextTokens == 0 && !LlmProtocol::isPublicCloud(request))
        ollama(request, endpoint, out);
    const LlmLimits table = fromTable(request.model);
    out.outputTokens = table.outputTokens;
    out.outputSource = table.outputSource;
    if (out.contextTokens == 0 && table.contextTokens > 0) {
        out.contextTokens = table.contextTokens;
        out.source = table.source;
    }
    return out;
}

LlmLimits::Fit LlmLimits::fit(int configuredMaxTokens, int fullPromptTokens, int compactPromptTokens) const
{
    Fit f;
    int want = configuredMaxTokens > 0 ? configuredMaxTokens : 16384;
    if (outputTokens > 0)
        want = std::min(want, outputTokens);
    f.maxTokens = want;
    if (contextTokens <= 0)
        return f; // nothing known: ask for what was configured
    const int roomFull = contextTokens - fullPromptTokens - MarginTokens;
    if (roomFull >= std::min(want, MinOutputTokens)) {
        f.maxTokens = std::min(want, roomFull);
        return f;
    }
    const int roomCompact = contextTokens - compactPromptTokens - MarginTokens;
    if (compactPromptTokens > 0 && roomCompact >= std::min(want, MinOutputTokens)) {
        f.compact = true;
        f.maxTokens = std::min(want, roomCompact);
        return f;
    }
    f.maxTokens = 0;
    f.error = QStringLiteral(
        "the model's context (%1 tokens, from %2) cannot hold the prompt (about %3 tokens, %4 with the "
        "compact "
        "playbook) and a reply of %5 tokens: give the server a longer context (vLLM --max-model-len, "
        "llama.cpp "
        "-c, OLLAMA_CONTEXT_LENGTH) or, if the number is wrong, set run.json's agent.context_tokens")
                  .arg(contextTokens)
                  .arg(source.isEmpty() ? QStringLiteral("the server") : source)
                  .arg(fullPromptTokens)
                  .arg(compactPromptTokens)
                  .arg(std::min(want, MinOutputTokens));
    return f;
}

} // namespace ak
