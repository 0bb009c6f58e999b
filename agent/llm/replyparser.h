#pragma once

#include <QString>

namespace ak {

// What an LLM reply yields: the full new kernel.py and a one-line description, or why not.
struct ParsedReply
{
    bool ok = false;
    QString error; // one line, names what is missing or ambiguous
    QString kernelPy; // LF line endings, ends with a newline
    QString description; // trimmed, single line
    QString reasoning; // the model's <think>…</think> text, taken out before parsing (for review)
};

// The reply format program.md teaches (keep the two in step; tests/agent/tst_playbook.cpp checks):
//
//   DESCRIPTION: <one line: what changed and why>
//   ```python
//   <the complete kernel.py>
//   ```
//
// Prose around them is ignored. Accepted variations: CRLF or CR line endings; ```py / ```python3 /
// ```Python; a block with no language tag counts as the python block when it defines kernel_fn;
// longer fences (````); a bold or quoted label ("**Description:** ..."). Rejected: no python block,
// several python blocks, an unclosed fence (a truncated reply), a block that does not define
// kernel_fn, a missing or empty DESCRIPTION. A reasoning model served without a reasoning parser
// puts its thinking, draft code included, in <think>…</think> before the answer: that is taken out
// (kept in `reasoning`) and never parsed as the answer; an unclosed <think> is a truncated reply.
class ReplyParser
{
public:
    static ParsedReply parse(const QString &reply);
};

} // namespace ak
