#pragma once

#include <QString>

namespace ak {

// Text a kernel, a worker or an LLM wrote is data (#39): before it is shown (CLI, window, report, logs)
// or recorded, every character that could steer a terminal or reorder what a person reads is made
// visible instead: C0 and C1 controls other than newline and tab (ESC starts terminal escape codes),
// DEL, and the Unicode bidirectional and zero-width formatting controls (U+061C, U+200B-U+200F,
// U+202A-U+202E, U+2060-U+2069, U+FEFF). Each becomes "\xNN" or "\uNNNN".
class TerminalText
{
public:
    static QString clean(const QString &text);
    static bool isUnsafe(char16_t c);
};

} // namespace ak
