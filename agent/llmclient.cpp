#include "llmclient.h"

#include "llmprotocol.h"
#include "secrets.h"
#include "ssedecoder.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QRandomGenerator>
#include <QThread>
#include <QTimer>

#include <algorithm>

namespace ak {
namespace {

constexpr qsizetype kMaxReplyBytes = 16 * 1024 * 1024; // a kernel.py reply is tens of kB
constexpr int kStopPollMs = 25;

} // namespace

LlmClient::LlmClient(const std::atomic<bool> *stop)
    : m_stop(stop)
{ }

QString LlmClient::redact(QString text, const QString &secret)
{
    if (secret.size() >= 4)
        text.replace(secret, QStringLiteral("[redacted]"));
    return secrets::redact(text);
}

int LlmClient::retryAfterMs(const QByteArray &value)
{
    const QByteArray v = value.trimmed();
    if (v.isEmpty())
        return -1;
    bool ok = false;
    const double seconds = v.toDouble(&ok);
    if (ok)
        return seconds < 0 ? -1 : int(std::min(seconds, 86400.0) * 1000);
    // HTTP dates say "GMT" ("Wed, 21 Oct 2015 07:28:00 GMT"); Qt's RFC 2822 parser wants an offset.
    QString date = QString::fromLatin1(v);
    if (date.endsWith(QLatin1String(" GMT")))
        date = date.chopped(4) + QStringLiteral(" +0000");
    const QDateTime when = QDateTime::fromString(date, Qt::RFC2822Date);
    if (!when.isValid())
        return -1;
    return int(std::clamp<qint64>(QDateTime::currentDateTimeUtc().msecsTo(when), 0, 86400 * 1000));
}

bool LlmClient::isRetryableStatus(int status)
{
    return status == 408 || status == 429 || status >= 500;
}

bool LlmClient::isRetryableNetworkError(QNetworkReply::NetworkError error)
{
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::TimeoutError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::UnknownProxyError:
    case QNetworkReply::ServiceUnavailableError:
    case QNetworkReply::InternalServerError:
    case QNetworkReply::UnknownServerError:
        return true;
    default:
        return false;
    }
}

bool LlmClient::sleepMs(int ms) const
{
    QDeadlineTimer deadline(ms);
    while (!deadline.hasExpired()) {
        if (m_stop && m_stop->load())
            return false;
        QThread::msleep(std::min<qint64>(kStopPollMs, std::max<qint64>(1, deadline.remainingTime())));
    }
    return !(m_stop && m_stop->load());
}

LlmResponse LlmClient::send(const LlmRequest &original)
{
    LlmRequest request = original;
    bool switched = false;
    LlmResponse last;
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    const int attempts = std::max(1, request.maxAttempts);
    QElapsedTimer spent;
    spent.start();
    bool outOfBudget = false;
    for (int i = 1; i <= attempts; ++i) {
        int retryAfter = -1;
        last = attempt(request, &retryAfter);
        // Tokens a failed attempt reported were still billed.
        tokensIn += last.tokensIn;
        tokensOut += last.tokensOut;
        last.tokensIn = tokensIn;
        last.tokensOut = tokensOut;
        last.attempts = i;
        // "Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens' instead." (OpenAI's
        // reasoning models): the same limit under the other name, sent again at once, not a retry.
        if (!last.ok && last.httpStatus == 400 && !switched && !request.maxCompletionTokens
            && request.protocol == LlmRequest::Protocol::OpenAi
            && last.error.contains(QLatin1String("max_completion_tokens"))) {
            request.maxCompletionTokens = switched = true;
            --i;
            continue;
        }
        if (last.ok || !last.retryable || i == attempts)
            break;
        const int wait = retryDelayMs(request, i, retryAfter, QRandomGenerator::global()->generateDouble());
        if (spent.elapsed() + wait > request.retryBudgetMs) {
            outOfBudget = true;
            break;
        }
        if (!sleepMs(wait)) {
            last.ok = false;
            last.errorKind = AgentError::Kind::Cancelled;
            last.error = QStringLiteral("stopped by request");
            last.retryable = false;
            break;
        }
    }
    if (outOfBudget)
        last.error
            += QStringLiteral(" (after %1 attempt(s): the next wait would pass the retry budget of %2 s)")
                   .arg(last.attempts)
                   .arg(request.retryBudgetMs / 1000.0, 0, 'f', 1);
    else if (!last.ok && last.attempts > 1 && last.errorKind != AgentError::Kind::Cancelled)
        last.error += QStringLiteral(" (after %1 attempts)").arg(last.attempts);
    last.error = redact(last.error, request.apiKey);
    last.switchedToMaxCompletionTokens = switched;
    return last;
}

int LlmClient::retryDelayMs(const LlmRequest &request, int attempt, int retryAfterMs, double random01)
{
    const double r = std::clamp(random01, 0.0, 1.0);
    if (retryAfterMs >= 0) {
        const qint64 base = std::min<qint64>(retryAfterMs, request.maxRetryAfterMs);
        return int(base + qint64(base * 0.1 * r));
    }
    const qint64 backoff = std::min<qint64>(
        qint64(request.initialBackoffMs) << std::clamp(attempt - 1, 0, 20), request.maxBackoffMs);
    return int(backoff / 2 + qint64(backoff / 2 * r));
}

LlmResponse LlmClient::attempt(const LlmRequest &request, int *retryAfter)
{
    LlmResponse out;
    if (m_stop && m_stop->load()) {
        out.errorKind = AgentError::Kind::Cancelled;
        out.error = QStringLiteral("stopped by request");
        return out;
    }

    QNetworkAccessManager nam;
    QNetworkRequest nr = LlmProtocol::networkRequest(request);
    QNetworkReply *reply = nam.post(nr, LlmProtocol::body(request));

    enum class Abort { None, Total, Cancel, TooLarge, BadStream, FirstByte, Idle };
    Abort abortReason = Abort::None;
    bool streaming = false;
    bool done = false;
    QByteArray whole;
    SseDecoder decoder;
    QString streamError;
    bool gotData = false;

    QEventLoop loop;
    QTimer total;
    total.setSingleShot(true);
    // Silence: until the first byte the first-byte limit (a non-streamed reply sends nothing until
    // the model is done), then the idle limit between bytes.
    QTimer silence;
    silence.setSingleShot(true);
    QTimer poll;
    auto abortWith = [&](Abort why) {
        if (abortReason == Abort::None)
            abortReason = why;
        reply->abort();
    };
    QObject::connect(&total, &QTimer::timeout, &loop, [&] { abortWith(Abort::Total); });
    QObject::connect(
        &silence, &QTimer::timeout, &loop, [&] { abortWith(gotData ? Abort::Idle : Abort::FirstByte); });
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (m_stop && m_stop->load())
            abortWith(Abort::Cancel);
    });
    QObject::connect(reply, &QNetworkReply::metaDataChanged, &loop, [&] {
        const QString type = reply->header(QNetworkRequest::ContentTypeHeader).toString();
        streaming = type.startsWith(QLatin1String("text/event-stream"));
    });
    QObject::connect(reply, &QNetworkReply::readyRead, &loop, [&] {
        const QByteArray chunk = reply->readAll();
        gotData = gotData || !chunk.isEmpty();
        silence.start(std::max(1, request.idleTimeoutMs));
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (!streaming || status >= 300) {
            whole.append(chunk);
            if (whole.size() > kMaxReplyBytes)
                abortWith(Abort::TooLarge);
            return;
        }
        for (const SseEvent &e : decoder.feed(chunk)) {
            if (!LlmProtocol::applyEvent(request.protocol, e, &out, &done)) {
                streamError = out.error;
                abortWith(Abort::BadStream);
                return;
            }
        }
        if (out.text.size() > kMaxReplyBytes)
            abortWith(Abort::TooLarge);
    });
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    total.start(std::max(1, request.totalTimeoutMs));
    silence.start(
        std::max(1, request.firstByteTimeoutMs > 0 ? request.firstByteTimeoutMs : request.idleTimeoutMs));
    poll.start(kStopPollMs);
    if (!reply->isFinished())
        loop.exec();

    out.httpStatus = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    // OpenAI sends retry-after-ms beside (or instead of) Retry-After: the finer one wins.
    const QByteArray afterMs = reply->rawHeader("retry-after-ms").trimmed();
    bool msOk = false;
    const double ms = afterMs.toDouble(&msOk);
    *retryAfter
        = msOk && ms >= 0 ? int(std::min(ms, 86400.0 * 1000)) : retryAfterMs(reply->rawHeader("Retry-After"));
    const QNetworkReply::NetworkError netError = reply->error();
    const QString netErrorText = reply->errorString();
    const QString location = QString::fromUtf8(reply->rawHeader("Location")).trimmed();
    if (streaming && abortReason == Abort::None && out.httpStatus < 300) {
        for (const SseEvent &e : decoder.finish()) {
            if (!LlmProtocol::applyEvent(request.protocol, e, &out, &done)) {
                streamError = out.error;
                abortReason = Abort::BadStream;
                break;
            }
        }
    }
    delete reply;

    auto fail = [&](AgentError::Kind kind, const QString &why, bool retryable) {
        out.ok = false;
        out.errorKind = kind;
        out.error = why;
        out.retryable = retryable;
        return out;
    };
    const int seconds = std::max(1, request.totalTimeoutMs / 1000);
    switch (abortReason) {
    case Abort::Cancel:
        return fail(AgentError::Kind::Cancelled, QStringLiteral("stopped by request"), false);
    case Abort::Total:
        return fail(
            AgentError::Kind::Timeout, QStringLiteral("no complete reply within %1 s").arg(seconds), true);
    case Abort::FirstByte:
        return fail(AgentError::Kind::Timeout,
            QStringLiteral(
                "no answer from the server within %1 s of the request (agent.first_byte_timeout_sec)")
                .arg(std::max(1, request.firstByteTimeoutMs / 1000)),
            true);
    case Abort::Idle:
        return fail(AgentError::Kind::Timeout,
            QStringLiteral("no data from the server for %1 s mid-reply (agent.idle_timeout_sec)")
                .arg(std::max(1, request.idleTimeoutMs / 1000)),
            true);
    case Abort::TooLarge:
        return fail(AgentError::Kind::BadReply,
            QStringLiteral("the reply exceeds %1 MiB").arg(kMaxReplyBytes >> 20), false);
    case Abort::BadStream: {
        // Anthropic reports overload inside a 200 stream; that one is worth retrying.
        const bool overloaded = streamError.contains(QLatin1String("overloaded"))
            || streamError.contains(QLatin1String("api_error"));
        out.errorInStream = true;
        return fail(
            AgentError::Kind::Http, QStringLiteral("error in the reply stream: ") + streamError, overloaded);
    }
    case Abort::None:
        break;
    }

    if (out.httpStatus >= 400) {
        const QString msg = LlmProtocol::errorMessage(whole);
        // A 429 for an exhausted quota or billing limit is not a rate limit: retrying cannot help.
        if (out.httpStatus == 429
            && (whole.contains("insufficient_quota") || whole.contains("billing_hard_limit")))
            return fail(AgentError::Kind::Http,
                QStringLiteral(
                    "HTTP 429 from %1: the account's quota is exhausted (add credit or use another key)%2")
                    .arg(LlmProtocol::endpoint(request).toDisplayString(),
                        msg.isEmpty() ? QString() : QStringLiteral(": ") + msg),
                false);
        return fail(AgentError::Kind::Http,
            QStringLiteral("HTTP %1 from %2%3")
                .arg(out.httpStatus)
                .arg(LlmProtocol::endpoint(request).toDisplayString(),
                    msg.isEmpty() ? QString() : QStringLiteral(": ") + msg),
            isRetryableStatus(out.httpStatus));
    }
    // A redirect that was not followed (another origin must not get the key) is the base URL's
    // fault, not an outage: said with the target, so the person can set the final URL.
    if (netError == QNetworkReply::InsecureRedirectError || netError == QNetworkReply::TooManyRedirectsError
        || (out.httpStatus >= 300 && out.httpStatus < 400))
        return fail(AgentError::Kind::Network,
            QStringLiteral("%1 redirects to %2 (not followed: the key is sent to the same origin only)")
                .arg(LlmProtocol::endpoint(request).toDisplayString(),
                    location.isEmpty() ? QStringLiteral("another host") : location),
            false);
    if (netError == QNetworkReply::OperationCanceledError)
        return fail(AgentError::Kind::Timeout,
            QStringLiteral("no data from the server for %1 s").arg(std::max(1, request.idleTimeoutMs / 1000)),
            true);
    if (netError != QNetworkReply::NoError) {
        const QString where = LlmProtocol::endpoint(request).toDisplayString();
        const QString what = !gotData
            ? QStringLiteral("request to %1 failed: %2").arg(where, netErrorText)
            : QStringLiteral("connection to %1 lost mid-reply: %2").arg(where, netErrorText);
        return fail(AgentError::Kind::Network, what, isRetryableNetworkError(netError));
    }

    if (streaming) {
        // A stream that closes cleanly before its terminator ([DONE], message_stop) was cut off (a
        // proxy's timeout, a restarted server): its text is a fragment, not a reply, so it is retried
        // like a dropped connection. Servers that never send [DONE] (llama.cpp before 2024-09,
        // ik_llama.cpp) still say why the model stopped: a finish_reason makes the reply complete.
        if (!done && out.stopReason.isEmpty())
            return fail(AgentError::Kind::Network,
                out.text.isEmpty()
                    ? QStringLiteral("the reply stream ended without an answer")
                    : QStringLiteral("the reply stream ended before its end marker (cut off after %1 "
                                     "characters)")
                          .arg(out.text.size()),
                true);
    } else if (!LlmProtocol::parseBody(request.protocol, whole, &out)) {
        return fail(AgentError::Kind::BadReply, out.error, false);
    }
    out.ok = true;
    out.error.clear();
    return out;
}

} // namespace ak
