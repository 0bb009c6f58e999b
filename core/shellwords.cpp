#include "shellwords.h"

#include <QRegularExpression>

namespace ak::shellwords {

QStringList split(const QString &text, QChar *unclosedQuote)
{
    QStringList args;
    QString word;
    bool inWord = false;
    QChar quote;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (quote == QLatin1Char('\'')) {
            if (c == quote)
                quote = QChar();
            else
                word += c;
        } else if (quote == QLatin1Char('"')) {
            if (c == quote)
                quote = QChar();
            else if (c == QLatin1Char('\\') && i + 1 < text.size()
                && (text.at(i + 1) == QLatin1Char('"') || text.at(i + 1) == QLatin1Char('\\')))
                word += text.at(++i);
            else
                word += c;
        } else if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
            quote = c;
            inWord = true;
        } else if (c == QLatin1Char('\\') && i + 1 < text.size()) {
            word += text.at(++i);
            inWord = true;
        } else if (c.isSpace()) {
            if (inWord)
                args << word;
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (unclosedQuote)
        *unclosedQuote = quote;
    if (!quote.isNull())
        return {};
    if (inWord)
        args << word;
    return args;
}

QString quote(const QString &word)
{
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
    if (safe.match(word).hasMatch())
        return word;
    QString out = word;
    out.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + out + QLatin1Char('\'');
}

QString join(const QStringList &words)
{
    QStringList quoted;
    quoted.reserve(words.size());
    for (const QString &w : words)
        quoted << quote(w);
    return quoted.join(QLatin1Char(' '));
}

} // namespace ak::shellwords
