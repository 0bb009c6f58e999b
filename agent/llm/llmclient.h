#pragma once

#include "llm/llmrequest.h"

#include <QNetworkReply>

#include <atomic>

namespace ak {

// Sends one LlmRequest and waits for the reply, in the calling thread (it runs a local event loop, so
// any thread works, including a loop worker without its own). The QNetworkAccessManager is created
// per call, in the calling thread, as Qt requires. Streaming (SSE) or whole replies; a total and an
// idle timeout per attempt; retries with exponential backoff on 429, 5xx and connection failures,
// honouring Retry-After; no retry on other 4xx. `stop` (may be null) is polled: when it becomes true
// the request is aborted and the response has errorKind Cancelled.
class LlmClient
{
public:
    explicit LlmClient(const std::atomic<bool> *stop = nullptr);

    LlmResponse send(const LlmRequest &request);

    // Replaces every occurrence of the secret in text (error bodies may echo a key back).
    static QString redact(QString text, const QString &secret);
    // Seconds to wait from a Retry-After value (delta-seconds or an HTTP date); -1 when absent/invalid.
    static int retryAfterMs(const QByteArray &value);
    // How long to wait before attempt `attempt` + 1: the server's Retry-After (`retryAfterMs` >= 0,
    // up to maxRetryAfterMs) plus up to 10 % more, else the doubling back-off with equal jitter (half
    // fixed, half random), so several devices' agents do not retry in step. `random01` in [0, 1).
    static int retryDelayMs(const LlmRequest &request, int attempt, int retryAfterMs, double random01);
    static bool isRetryableStatus(int status);
    static bool isRetryableNetworkError(QNetworkReply::NetworkError error);

private:
    LlmResponse attempt(const LlmRequest &request, int *retryAfter);
    bool sleepMs(int ms) const; // false when stopped during the wait

    const std::atomic<bool> *m_stop;
};

} // namespace ak
