#include "llm/ssedecoder.h"

namespace ak {

QVector<SseEvent> SseDecoder::feed(const QByteArray &bytes)
{
    QVector<SseEvent> out;
    m_buffer.append(bytes);
    qsizetype start = 0;
    while (true) {
        const qsizetype nl = m_buffer.indexOf('\n', start);
        if (nl < 0)
            break;
        QByteArray line = m_buffer.mid(start, nl - start);
        if (line.endsWith('\r'))
            line.chop(1);
        takeLine(std::move(line), &out);
        start = nl + 1;
    }
    m_buffer.remove(0, start);
    return out;
}

QVector<SseEvent> SseDecoder::finish()
{
    QVector<SseEvent> out;
    if (!m_buffer.isEmpty()) {
        QByteArray line = m_buffer;
        m_buffer.clear();
        if (line.endsWith('\r'))
            line.chop(1);
        takeLine(std::move(line), &out);
    }
    dispatch(&out);
    return out;
}

void SseDecoder::takeLine(QByteArray line, QVector<SseEvent> *out)
{
    if (line.isEmpty()) {
        dispatch(out);
        return;
    }
    if (line.startsWith(':'))
        return;
    const qsizetype colon = line.indexOf(':');
    QByteArray field = colon < 0 ? line : line.left(colon);
    QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
    if (value.startsWith(' '))
        value.remove(0, 1);
    if (field == "data") {
        if (m_hasData)
            m_data.append('\n');
        m_data.append(value);
        m_hasData = true;
    } else if (field == "event") {
        m_event = QString::fromUtf8(value);
    }
}

void SseDecoder::dispatch(QVector<SseEvent> *out)
{
    if (m_hasData)
        out->append(SseEvent { m_event, m_data });
    m_event.clear();
    m_data.clear();
    m_hasData = false;
}

} // namespace ak
