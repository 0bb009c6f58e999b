#include "terminaltext.h"

namespace ak {

bool TerminalText::isUnsafe(char16_t c)
{
    if (c == u'\n' || c == u'\t')
        return false;
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f))
        return true;
    return c == 0x061c || (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e)
        || (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

QString TerminalText::clean(const QString &text)
{
    bool any = false;
    for (const QChar ch : text)
        if (isUnsafe(ch.unicode())) {
            any = true;
            break;
        }
    if (!any)
        return text;
    QString out;
    out.reserve(text.size() + 16);
    for (const QChar ch : text) {
        const char16_t c = ch.unicode();
        if (!isUnsafe(c))
            out += ch;
        else if (c < 0x100)
            out += QStringLiteral("\\x%1").arg(uint(c), 2, 16, QLatin1Char('0'));
        else
            out += QStringLiteral("\\u%1").arg(uint(c), 4, 16, QLatin1Char('0'));
    }
    return out;
}

} // namespace ak
