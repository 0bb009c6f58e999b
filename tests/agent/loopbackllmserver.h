#pragma once

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QMutex>
#include <QPair>
#include <QQueue>
#include <QString>
#include <QThread>
#include <QVector>

namespace ak::test {

// What the loopback server answers to the next request, in order of arrival.
struct ScriptedReply
{
    enum class Kind {
        Reply, // the assistant's `text`, as JSON or as an SSE stream (whichever the request asked for)
        Status, // HTTP `status` with the protocol's error body carrying `text` as the message
        Raw, // `raw` as the body with `status` and `contentType`, byte for byte (garbage, empty)
        Drop, // close the connection without answering
    };
    Kind kind = Kind::Reply;
    QString text;
    int status = 200;
    QByteArray raw;
    QByteArray contentType = "application/json";
    QList<QPair<QByteArray, QByteArray>> headers; // extra response headers, e.g. Retry-After
    QString stopReason; // empty = "stop" / "end_turn"
    int delayMs = 0; // before the status line
    int chunkDelayMs = 0; // between stream events
    int chunkChars = 48; // text per stream event
    int stallAfterEvents = -1; // stream: go silent (connection open) after this many events
    int dropAfterEvents = -1; // stream: close the connection after this many events
    qint64 tokensIn = 120;
    qint64 tokensOut = 45;

    static ScriptedReply reply(const QString &text) { return ScriptedReply { Kind::Reply, text }; }
    static ScriptedReply error(int status, const QString &message = QStringLiteral("scripted error"))
    {
        ScriptedReply r { Kind::Status, message };
        r.status = status;
        return r;
    }
    // `body` byte for byte with `status`: a server's own error shape.
    static ScriptedReply rawReply(int status, const QByteArray &body)
    {
        ScriptedReply r { Kind::Raw, QString() };
        r.status = status;
        r.raw = body;
        return r;
    }
    // A 200 event stream, byte for byte: a server's own events (errors inside it, reasoning, pings).
    static ScriptedReply stream(const QByteArray &events)
    {
        ScriptedReply r = rawReply(200, events);
        r.contentType = "text/event-stream";
        return r;
    }
};

struct RecordedRequest
{
    QByteArray method;
    QByteArray path;
    QMap<QByteArray, QByteArray> headers; // names in lower case
    QByteArray body;
};

class LoopbackServerCore;

// An HTTP/1.1 server on 127.0.0.1 (never another address) that speaks the OpenAI Chat Completions
// (/v1/chat/completions) and Anthropic Messages (/v1/messages) protocols, streaming or not, and
// answers each request with the next scripted reply; with none left it answers 500. It runs in its
// own thread, so a client blocking in another thread (as an agent in a loop worker does) is served.
class LoopbackLlmServer
{
public:
    LoopbackLlmServer();
    ~LoopbackLlmServer();

    bool start();
    quint16 port() const { return m_port; }
    // "http://127.0.0.1:<port>/v1": the base URL for either protocol.
    QString baseUrl() const;

    void enqueue(const ScriptedReply &reply);
    int pendingReplies() const;
    // The chat requests (/chat/completions, /messages), in order of arrival.
    QVector<RecordedRequest> requests() const;
    // What a server says about itself (GET /v1/models, /props, /api/ps, POST /api/show): answered
    // from setDiscoveryReply by path, 404 when not set, never from the queue, recorded apart, so
    // the agent's discovery of the model's limits changes nothing for tests of the chat requests.
    void setDiscoveryReply(const QByteArray &path, const ScriptedReply &reply);
    QVector<RecordedRequest> discoveryRequests() const;
    static bool isChatPath(const QByteArray &path);

private:
    friend class LoopbackServerCore;
    bool next(const RecordedRequest &request, ScriptedReply *out);
    void record(const RecordedRequest &request);

    QThread m_thread;
    LoopbackServerCore *m_core = nullptr;
    quint16 m_port = 0;
    mutable QMutex m_mutex;
    QQueue<ScriptedReply> m_replies;
    QVector<RecordedRequest> m_requests;
    QVector<RecordedRequest> m_discoveryRequests;
    QMap<QByteArray, ScriptedReply> m_discovery;
};

} // namespace ak::test
