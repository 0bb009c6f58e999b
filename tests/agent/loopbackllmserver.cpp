#include "loopbackllmserver.h"

#include <QHostAddress>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace ak::test {

// Lives in the server thread; all sockets belong to it.
class LoopbackServerCore : public QObject
{
public:
    explicit LoopbackServerCore(LoopbackLlmServer *owner)
        : m_owner(owner)
    { }

    quint16 listen()
    {
        m_server = new QTcpServer(this);
        if (!m_server->listen(QHostAddress::LocalHost, 0))
            return 0;
        QObject::connect(m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server->nextPendingConnection()) {
                QObject::connect(s, &QTcpSocket::readyRead, this, [this, s] { onData(s); });
                QObject::connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
            }
        });
        return m_server->serverPort();
    }

private:
    void onData(QTcpSocket *s)
    {
        QByteArray &buf = m_buffers[s];
        buf.append(s->readAll());
        const qsizetype end = buf.indexOf("\r\n\r\n");
        if (end < 0 || s->property("handled").toBool())
            return;
        RecordedRequest req;
        const QList<QByteArray> lines = buf.left(end).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        req.method = first.value(0);
        req.path = first.value(1);
        for (int i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines.at(i).indexOf(':');
            if (colon > 0)
                req.headers.insert(
                    lines.at(i).left(colon).trimmed().toLower(), lines.at(i).mid(colon + 1).trimmed());
        }
        const qsizetype length = req.headers.value("content-length", "0").toLongLong();
        if (buf.size() < end + 4 + length)
            return;
        req.body = buf.mid(end + 4, length);
        s->setProperty("handled", true);
        m_buffers.remove(s);
        m_owner->record(req);
        ScriptedReply r;
        if (!m_owner->next(req, &r))
            r = ScriptedReply::error(500, QStringLiteral("the loopback server has no scripted reply left"));
        QPointer<QTcpSocket> guard(s);
        QTimer::singleShot(r.delayMs, s, [this, guard, req, r] {
            if (guard)
                respond(guard, req, r);
        });
    }

    static QByteArray statusLine(int status)
    {
        const char *text = status == 200 ? "OK"
            : status == 429              ? "Too Many Requests"
            : status < 500               ? "Client Error"
                                         : "Server Error";
        return "HTTP/1.1 " + QByteArray::number(status) + ' ' + text + "\r\n";
    }

    static QByteArray head(const ScriptedReply &r, int status, const QByteArray &type, qsizetype length)
    {
        QByteArray h = statusLine(status) + "Content-Type: " + type + "\r\nConnection: close\r\n";
        h += length >= 0 ? "Content-Length: " + QByteArray::number(length) + "\r\n"
                         : QByteArray("Transfer-Encoding: chunked\r\n");
        for (const auto &kv : r.headers)
            h += kv.first + ": " + kv.second + "\r\n";
        return h + "\r\n";
    }

    void respond(QTcpSocket *s, const RecordedRequest &req, const ScriptedReply &r)
    {
        const bool anthropic = req.path.endsWith("/messages");
        const json body
            = json::parse(req.body.constData(), req.body.constData() + req.body.size(), nullptr, false);
        const bool stream = body.is_object() && body.value("stream", false);
        const std::string model = body.is_object() ? body.value("model", std::string("?")) : std::string("?");
        switch (r.kind) {
        case ScriptedReply::Kind::Drop:
            s->abort();
            return;
        case ScriptedReply::Kind::Raw:
            s->write(head(r, r.status, r.contentType, r.raw.size()) + r.raw);
            s->disconnectFromHost();
            return;
        case ScriptedReply::Kind::Status: {
            const json e = anthropic
                ? json { { "type", "error" },
                      { "error", { { "type", "api_error" }, { "message", r.text.toStdString() } } } }
                : json { { "error", { { "message", r.text.toStdString() }, { "type", "server_error" } } } };
            const QByteArray b = QByteArray::fromStdString(e.dump());
            s->write(head(r, r.status, "application/json", b.size()) + b);
            s->disconnectFromHost();
            return;
        }
        case ScriptedReply::Kind::Reply:
            break;
        }
        const std::string stop
            = r.stopReason.isEmpty() ? (anthropic ? "end_turn" : "stop") : r.stopReason.toStdString();
        if (!stream) {
            json j;
            if (anthropic)
                j = { { "id", "msg_loop" }, { "type", "message" }, { "role", "assistant" },
                    { "model", model },
                    { "content", json::array({ { { "type", "text" }, { "text", r.text.toStdString() } } }) },
                    { "stop_reason", stop },
                    { "usage", { { "input_tokens", r.tokensIn }, { "output_tokens", r.tokensOut } } } };
            else
                j = { { "id", "chatcmpl-loop" }, { "object", "chat.completion" }, { "model", model },
                    { "choices",
                        json::array({ { { "index", 0 },
                            { "message", { { "role", "assistant" }, { "content", r.text.toStdString() } } },
                            { "finish_reason", stop } } }) },
                    { "usage",
                        { { "prompt_tokens", r.tokensIn }, { "completion_tokens", r.tokensOut },
                            { "total_tokens", r.tokensIn + r.tokensOut } } } };
            const QByteArray b = QByteArray::fromStdString(j.dump());
            s->write(head(r, 200, "application/json", b.size()) + b);
            s->disconnectFromHost();
            return;
        }
        QVector<QByteArray> events;
        auto ev = [&](const char *name, const json &data) {
            events << (name ? QByteArray("event: ") + name + "\n" : QByteArray())
                    + "data: " + QByteArray::fromStdString(data.dump()) + "\n\n";
        };
        QStringList pieces;
        for (qsizetype i = 0; i < r.text.size(); i += std::max(1, r.chunkChars))
            pieces << r.text.mid(i, std::max(1, r.chunkChars));
        if (anthropic) {
            ev("message_start",
                { { "type", "message_start" },
                    { "message",
                        { { "id", "msg_loop" }, { "model", model },
                            { "usage", { { "input_tokens", r.tokensIn }, { "output_tokens", 1 } } } } } });
            ev("content_block_start",
                { { "type", "content_block_start" }, { "index", 0 },
                    { "content_block", { { "type", "text" }, { "text", "" } } } });
            events << QByteArray(": keep-alive comment\n\n");
            for (const QString &p : pieces)
                ev("content_block_delta",
                    { { "type", "content_block_delta" }, { "index", 0 },
                        { "delta", { { "type", "text_delta" }, { "text", p.toStdString() } } } });
            ev("content_block_stop", { { "type", "content_block_stop" }, { "index", 0 } });
            ev("message_delta",
                { { "type", "message_delta" }, { "delta", { { "stop_reason", stop } } },
                    { "usage", { { "output_tokens", r.tokensOut } } } });
            ev("message_stop", { { "type", "message_stop" } });
        } else {
            ev(nullptr,
                { { "choices",
                    json::array({ { { "index", 0 },
                        { "delta", { { "role", "assistant" }, { "content", "" } } } } }) } });
            for (const QString &p : pieces)
                ev(nullptr,
                    { { "choices",
                        json::array({ { { "index", 0 }, { "delta", { { "content", p.toStdString() } } },
                            { "finish_reason", nullptr } } }) } });
            ev(nullptr,
                { { "choices",
                    json::array(
                        { { { "index", 0 }, { "delta", json::object() }, { "finish_reason", stop } } }) } });
            ev(nullptr,
                { { "choices", json::array() },
                    { "usage", { { "prompt_tokens", r.tokensIn }, { "completion_tokens", r.tokensOut } } } });
            events << QByteArray("data: [DONE]\n\n");
        }
        s->write(head(r, 200, "text/event-stream", -1));
        QPointer<QTcpSocket> guard(s);
        int at = 0;
        for (int i = 0; i <= events.size(); ++i) {
            const bool last = i == events.size();
            const bool stall = r.stallAfterEvents >= 0 && i == r.stallAfterEvents;
            const bool drop = r.dropAfterEvents >= 0 && i == r.dropAfterEvents;
            const QByteArray chunk = last
                ? QByteArray("0\r\n\r\n")
                : QByteArray::number(events.at(i).size(), 16) + "\r\n" + events.at(i) + "\r\n";
            QTimer::singleShot(at, s, [guard, chunk, last, stall, drop] {
                if (!guard)
                    return;
                if (drop) {
                    guard->flush(); // what was sent must reach the client before the reset
                    guard->abort();
                    return;
                }
                if (stall)
                    return; // silent from here on: the connection stays open
                guard->write(chunk);
                if (last)
                    guard->disconnectFromHost();
            });
            if (stall || drop)
                break;
            at += r.chunkDelayMs;
        }
        // Chunks scheduled after a stall would break the silence: only those before it were queued.
    }

    LoopbackLlmServer *m_owner;
    QTcpServer *m_server = nullptr;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

LoopbackLlmServer::LoopbackLlmServer() = default;

LoopbackLlmServer::~LoopbackLlmServer()
{
    if (m_core) {
        QMetaObject::invokeMethod(
            m_core, [this] { delete m_core; }, Qt::BlockingQueuedConnection);
        m_core = nullptr;
    }
    m_thread.quit();
    m_thread.wait();
}

bool LoopbackLlmServer::start()
{
    m_thread.start();
    m_core = new LoopbackServerCore(this);
    m_core->moveToThread(&m_thread);
    quint16 port = 0;
    QMetaObject::invokeMethod(
        m_core, [this, &port] { port = m_core->listen(); }, Qt::BlockingQueuedConnection);
    m_port = port;
    return m_port != 0;
}

QString LoopbackLlmServer::baseUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1/v1").arg(m_port);
}

void LoopbackLlmServer::enqueue(const ScriptedReply &reply)
{
    QMutexLocker lock(&m_mutex);
    m_replies.enqueue(reply);
}

int LoopbackLlmServer::pendingReplies() const
{
    QMutexLocker lock(&m_mutex);
    return int(m_replies.size());
}

QVector<RecordedRequest> LoopbackLlmServer::requests() const
{
    QMutexLocker lock(&m_mutex);
    return m_requests;
}

bool LoopbackLlmServer::isChatPath(const QByteArray &path)
{
    return path.endsWith("/chat/completions") || path.endsWith("/messages");
}

void LoopbackLlmServer::setDiscoveryReply(const QByteArray &path, const ScriptedReply &reply)
{
    QMutexLocker lock(&m_mutex);
    m_discovery.insert(path, reply);
}

QVector<RecordedRequest> LoopbackLlmServer::discoveryRequests() const
{
    QMutexLocker lock(&m_mutex);
    return m_discoveryRequests;
}

bool LoopbackLlmServer::next(const RecordedRequest &request, ScriptedReply *out)
{
    QMutexLocker lock(&m_mutex);
    if (!isChatPath(request.path)) {
        *out = m_discovery.value(request.path, ScriptedReply::rawReply(404, "{}"));
        return true;
    }
    if (m_replies.isEmpty())
        return false;
    *out = m_replies.dequeue();
    return true;
}

void LoopbackLlmServer::record(const RecordedRequest &request)
{
    QMutexLocker lock(&m_mutex);
    (isChatPath(request.path) ? m_requests : m_discoveryRequests).append(request);
}

} // namespace ak::test
