#pragma once

#include <QByteArray>
#include <QString>
#include <QVector>

namespace ak {

struct SseEvent
{
    QString event; // "event:" field; empty = "message"
    QByteArray data; // "data:" lines joined by '\n'
};

// Incremental decoder for text/event-stream (WHATWG server-sent events): bytes arrive in arbitrary
// pieces from the network; complete events come out. Comments (": ping") and "id:"/"retry:" are ignored.
class SseDecoder
{
public:
    QVector<SseEvent> feed(const QByteArray &bytes);
    // End of stream: an event not terminated by a blank line is still delivered.
    QVector<SseEvent> finish();

private:
    void takeLine(QByteArray line, QVector<SseEvent> *out);
    void dispatch(QVector<SseEvent> *out);

    QByteArray m_buffer;
    QString m_event;
    QByteArray m_data;
    bool m_hasData = false;
};

} // namespace ak
