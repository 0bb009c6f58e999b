#pragma once

#include <QString>
#include <QStringList>

#include <cstddef>

namespace ak {

// An enum's names, both ways, from one table per enum: `constexpr EnumToken<E> kNames[] = {...}`
// next to the enum's code, read by tokenOf (value -> token) and fromToken (token -> value). A value
// may have more than one row: the first is its name, the others are accepted spellings ("half" for
// fp16). Tokens are what files, the command line and the worker use; people's words come elsewhere.
template<typename E>
struct EnumToken
{
    E value;
    const char *token;
};

// The value's name (its first row); empty when the table has no row for it.
template<typename E, std::size_t N>
QString tokenOf(const EnumToken<E> (&names)[N], E value)
{
    for (const EnumToken<E> &n : names)
        if (n.value == value)
            return QString::fromLatin1(n.token);
    return QString();
}

// False (and *out untouched) when `text` is no row's token; `out` may be null to only ask.
template<typename E, std::size_t N>
bool fromToken(const EnumToken<E> (&names)[N], const QString &text, E *out)
{
    for (const EnumToken<E> &n : names) {
        if (text == QLatin1String(n.token)) {
            if (out)
                *out = n.value;
            return true;
        }
    }
    return false;
}

// Every value's name in table order, each once (for usage texts and choosers).
template<typename E, std::size_t N>
QStringList tokensOf(const EnumToken<E> (&names)[N])
{
    QStringList out;
    for (const EnumToken<E> &n : names)
        if (tokenOf(names, n.value) == QLatin1String(n.token))
            out << QString::fromLatin1(n.token);
    return out;
}

} // namespace ak
