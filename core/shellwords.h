#pragma once

#include <QString>
#include <QStringList>

namespace ak::shellwords {

// POSIX shell word splitting without expansions: '...' is literal, "..." allows \" and \\, a
// backslash outside quotes escapes the next character (QProcess::splitCommand knows only "). Returns
// the words; an unbalanced quote gives an empty list and sets *error to the quote character.
QStringList split(const QString &text, QChar *unclosedQuote);

// One word quoted for a POSIX shell ('...' with ' written as '\''); words made only of safe
// characters stay as they are, so a logged command reads naturally.
QString quote(const QString &word);

// The words quoted and joined by spaces: the command line a remote shell (ssh's) runs as these words.
QString join(const QStringList &words);

} // namespace ak::shellwords
