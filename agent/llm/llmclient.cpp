#include "llm/llmclient.h"

#include "llm/llmprotocol.h"
#include "llm/ssedecoder.h"
#include "secrets.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QRandomGenerator>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <optional>
#include <utility>

namespace ak {
namespace {

constexpr qsizetype kMaxReplyBytes = 16 * 1024 * 1024; // a kernel.py reply is tens of kB
constexpr int kStopPollMs = 25;

// Why the client cut a reply short; None when the reply ended by itself, well or badly.
enum class ReplyAbort { None, Total, Cancel, TooLarge, BadStream, FirstByte, Idle };

// What one POST left behind, copied out of the QNetworkReply before it is deleted, so that judging
// the outcome (classifyExchange) needs neither the reply nor its event loop.
struct LlmExchange
{
    LlmResponse out; // what the stream's events filled in, plus httpStatus
    ReplyAbort abortReason = ReplyAbort::None;
    bool streaming = false; // the reply is text/event-stream
    bool done = false; // the stream's end marker ([DONE], message_stop) arrived
    bool gotData = false; // tells a refused request from a connection lost mid-reply
    QByteArray whole; // the body of a non-streamed reply, and of any reply with status >= 300
    SseDecoder decoder; // kept across the wait and the end, which flushes its last event
    QString streamError;
    int retryAfter = -1;
    QNetworkReply::NetworkError netError = QNetworkReply::NoError;
    QString netErrorText;
    QString location;
};

// Runs a local event loop until the reply finishes or is aborted: by the total timeout, by silence,
// by `stop`, by an oversized body or by a stream event the protocol rejects. Stream events are
// applied as they arrive (not at the end), so a rejected event or a runaway stream stops early.
void awaitLlmReply(
    const LlmRequest &request, const std::atomic<bool> *stop, QNetworkReply *reply, LlmExchange *x)
{
    QEventLoop loop;
    QTimer total;
    total.setSingleShot(true);
    // Silence: until the first byte the first-byte limit (a non-streamed reply sends nothing until
    // the model is done), then the idle limit between bytes.
    QTimer silence;
    silence.setSingleShot(true);
    QTimer poll;
    auto abortWith = [&](ReplyAbort why) {
        if (x->abortReason == ReplyAbort::None)
            x->abortReason = why;
        reply->abort();
    };
    QObject::connect(&total, &QTimer::timeout, &loop, [&] { abortWith(ReplyAbort::Total); });
    QObject::connect(&silence, &QTimer::timeout, &loop,
        [&] { abortWith(x->gotData ? ReplyAbort::Idle : ReplyAbort::FirstByte); });
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (stop && stop->load())
            abortWith(ReplyAbort::Cancel);
    });
    QObject::connect(reply, &QNetworkReply::metaDataChanged, &loop, [&] {
        const QString type = reply->header(QNetworkRequest::ContentTypeHeader).toString();
        x->streaming = type.startsWith(QLatin1String("text/event-stream"));
    });
    QObject::connect(reply, &QNetworkReply::readyRead, &loop, [&] {
        const QByteArray chunk = reply->readAll();
        x->gotData = x->gotData || !chunk.isEmpty();
        silence.start(std::max(1, request.idleTimeoutMs));
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (!x->streaming || status >= 300) {
            x->whole.append(chunk);
            if (x->whole.size() > kMaxReplyBytes)
                abortWith(ReplyAbort::TooLarge);
            return;
        }
        for (const SseEvent &e : x->decoder.feed(chunk)) {
            if (!LlmProtocol::applyEvent(request.protocol, e, &x->out, &x->done)) {
                x->streamError = x->out.error;
                abortWith(ReplyAbort::BadStream);
                return;
            }
        }
        if (x->out.text.size() > kMaxReplyBytes)
            abortWith(ReplyAbort::TooLarge);
    });
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    total.start(std::max(1, request.totalTimeoutMs));
    silence.start(
        std::max(1, request.firstByteTimeoutMs > 0 ? request.firstByteTimeoutMs : request.idleTimeoutMs));
    poll.start(kStopPollMs);
    if (!reply->isFinished())
        loop.exec();
}

// Copies what classifyExchange needs from the finished reply, and flushes the SSE decoder: a last
// event without its blank line still counts.
void readFinishedReply(const LlmRequest &request, QNetworkReply *reply, LlmExchange *x)
{
    x->out.httpStatus = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    // OpenAI sends retry-after-ms beside (or instead of) Retry-After: the finer one wins.
    const QByteArray afterMs = reply->rawHeader("retry-after-ms").trimmed();
    bool msOk = false;
    const double ms = afterMs.toDouble(&msOk);
    x->retryAfter = msOk && ms >= 0 ? int(std::min(ms, 86400.0 * 1000))
                                    : LlmClient::retryAfterMs(reply->rawHeader("Retry-After"));
    x->netError = reply->error();
    x->netErrorText = reply->errorString();
    x->location = QString::fromUtf8(reply->rawHeader("Location")).trimmed();
    if (x->streaming && x->abortReason == ReplyAbort::None && x->out.httpStatus < 300) {
        for (const SseEvent &e : x->decoder.finish()) {
            if (!LlmProtocol::applyEvent(request.protocol, e, &x->out, &x->done)) {
                x->streamError = x->out.error;
                x->abortReason = ReplyAbort::BadStream;
                break;
            }
        }
    }
}

// One POST, start to finish. The QNetworkAccessManager lives only for this call, in the calling
// thread, as Qt requires.
LlmExchange postLlmRequest(const LlmRequest &request, const std::atomic<bool> *stop)
{
    LlmExchange x;
    QNetworkAccessManager nam;
    QNetworkReply *reply = nam.post(LlmProtocol::networkRequest(request), LlmProtocol::body(request));
    awaitLlmReply(request, stop, reply, &x);
    readFinishedReply(request, reply, &x);
    delete reply;
    return x;
}

// A failed attempt keeps what it already had (tokens billed, httpStatus, partial text): send() adds
// the tokens up and the caller may show the status.
LlmResponse llmFailure(LlmResponse out, AgentError::Kind kind, const QString &why, bool retryable)
{
    out.ok = false;
    out.errorKind = kind;
    out.error = why;
    out.retryable = retryable;
    return out;
}

// The failure the client itself caused by aborting; nothing when the reply ended by itself.
std::optional<LlmResponse> abortFailure(const LlmRequest &request, const LlmExchange &x)
{
    const int seconds = std::max(1, request.totalTimeoutMs / 1000);
    switch (x.abortReason) {
    case ReplyAbort::Cancel:
        return llmFailure(x.out, AgentError::Kind::Cancelled, QStringLiteral("stopped by request"), false);
    case ReplyAbort::Total:
        return llmFailure(x.out, AgentError::Kind::Timeout,
            QStringLiteral("no complete reply within %1 s").arg(seconds), true);
    case ReplyAbort::FirstByte:
        return llmFailure(x.out, AgentError::Kind::Timeout,
            QStringLiteral(
                "no answer from the server within %1 s of the request (agent.first_byte_timeout_sec)")
                .arg(std::max(1, request.firstByteTimeoutMs / 1000)),
            true);
    case ReplyAbort::Idle:
        return llmFailure(x.out, AgentError::Kind::Timeout,
            QStringLiteral("no data from the server for %1 s mid-reply (agent.idle_timeout_sec)")
                .arg(std::max(1, request.idleTimeoutMs / 1000)),
            true);
    case ReplyAbort::TooLarge:
        return llmFailure(x.out, AgentError::Kind::BadReply,
            QStringLiteral("the reply exceeds %1 MiB").arg(kMaxReplyBytes >> 20), false);
    case ReplyAbort::BadStream: {
        // Anthropic reports overload inside a 200 stream; that one is worth retrying.
        const bool overloaded = x.streamError.contains(QLatin1String("overloaded"))
            || x.streamError.contains(QLatin1String("api_error"));
        LlmResponse out = x.out;
        out.errorInStream = true;
        return llmFailure(out, AgentError::Kind::Http,
            QStringLiteral("error in the reply stream: ") + x.streamError, overloaded);
    }
    case ReplyAbort::None:
        break;
    }
    return std::nullopt;
}

// The failure the transport reported: an HTTP error status, an unfollowed redirect, a network error.
std::optional<LlmResponse> transportFailure(const LlmRequest &request, const LlmExchange &x)
{
    const int status = x.out.httpStatus;
    const QString where = LlmProtocol::endpoint(request).toDisplayString();
    if (status >= 400) {
        const QString msg = LlmProtocol::errorMessage(x.whole);
        const QString detail = msg.isEmpty() ? QString() : QStringLiteral(": ") + msg;
        // A 429 for an exhausted quota or billing limit is not a rate limit: retrying cannot help.
        if (status == 429
            && (x.whole.contains("insufficient_quota") || x.whole.contains("billing_hard_limit")))
            return llmFailure(x.out, AgentError::Kind::Http,
                QStringLiteral(
                    "HTTP 429 from %1: the account's quota is exhausted (add credit or use another key)%2")
                    .arg(where, detail),
                false);
        return llmFailure(x.out, AgentError::Kind::Http,
            QStringLiteral("HTTP %1 from %2%3").arg(status).arg(where, detail),
            LlmClient::isRetryableStatus(status));
    }
    // A redirect that was not followed (another origin must not get the key) is the base URL's
    // fault, not an outage: said with the target, so the person can set the final URL.
    if (x.netError == QNetworkReply::InsecureRedirectError
        || x.netError == QNetworkReply::TooManyRedirectsError || (status >= 300 && status < 400))
        return llmFailure(x.out, AgentError::Kind::Network,
            QStringLiteral("%1 redirects to %2 (not followed: the key is sent to the same origin only)")
                .arg(where, x.location.isEmpty() ? QStringLiteral("another host") : x.location),
            false);
    if (x.netError == QNetworkReply::OperationCanceledError)
        return llmFailure(x.out, AgentError::Kind::Timeout,
            QStringLiteral("no data from the server for %1 s").arg(std::max(1, request.idleTimeoutMs / 1000)),
            true);
    if (x.netError != QNetworkReply::NoError) {
        const QString what = !x.gotData
            ? QStringLiteral("request to %1 failed: %2").arg(where, x.netErrorText)
            : QStringLiteral("connection to %1 lost mid-reply: %2").arg(where, x.netErrorText);
        return llmFailure(
            x.out, AgentError::Kind::Network, what, LlmClient::isRetryableNetworkError(x.netError));
    }
    return std::nullopt;
}

// Judges an exchange: first what the client aborted, then what the transport reported, and only then
// the reply itself, so a cut-off or failed reply is never parsed as an answer.
LlmResponse classifyExchange(const LlmRequest &request, LlmExchange x)
{
    if (std::optional<LlmResponse> failed = abortFailure(request, x))
        return *failed;
    if (std::optional<LlmResponse> failed = transportFailure(request, x))
        return *failed;
    LlmResponse &out = x.out;
    if (x.streaming) {
        // A stream that closes cleanly before its terminator ([DONE], message_stop) was cut off (a
        // proxy's timeout, a restarted server): its text is a fragment, not a reply, so it is retried
        // like a dropped connection. Servers that never send [DONE] (llama.cpp before 2024-09,
        // ik_llama.cpp) still say why the model stopped: a finish_reason makes the reply complete.
        if (!x.done && out.stopReason.isEmpty())
            return llmFailure(out, AgentError::Kind::Network,
                out.text.isEmpty()
                    ? QStringLiteral("the reply stream ended without an answer")
                    : QStringLiteral("the reply stream ended before its end marker (cut off after %1 "
                                     "characters)")
                          .arg(out.text.size()),
                true);
    } else if (!LlmProtocol::parseBody(request.protocol, x.whole, &out)) {
        return llmFailure(out, AgentError::Kind::BadReply, out.error, false);
    }
    out.ok = true;
    out.error.clear();
    return out;
}

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
    if (m_stop && m_stop->load()) {
        LlmResponse out;
        out.errorKind = AgentError::Kind::Cancelled;
        out.error = QStringLiteral("stopped by request");
        return out;
    }
    LlmExchange x = postLlmRequest(request, m_stop);
    *retryAfter = x.retryAfter;
    return classifyExchange(request, std::move(x));
}

} // namespace ak
