#include "llm/replyparser.h"

#include "terminaltext.h"

#include <QRegularExpression>
#include <QStringList>
#include <QVector>

namespace ak {

namespace {

struct Block
{
    QString lang; // first word of the info string, lower case
    QStringList lines;
    int line = 0; // 1-based line of the opening fence
    bool closed = false;
};

bool isPythonTag(const QString &lang)
{
    return lang == QLatin1String("python") || lang == QLatin1String("py") || lang == QLatin1String("python3");
}

bool definesKernelFn(const QString &code)
{
    static const QRegularExpression def(
        QStringLiteral(R"(^\s*(async\s+)?def\s+kernel_fn\s*\()"), QRegularExpression::MultilineOption);
    return def.match(code).hasMatch();
}

// Long descriptions become commit subjects and table cells: keep them readable.
constexpr int kMaxDescription = 200;

// <think>…</think> blocks (DeepSeek-R1, QwQ, Qwen3 without vLLM's reasoning parser): draft code in
// there is not the answer. They go to out->reasoning; false (out->error set) when one never closes.
bool takeOutThinking(QString *text, ParsedReply *out)
{
    static const QRegularExpression think(
        QStringLiteral(R"(<think>(.*?)</think>)"), QRegularExpression::DotMatchesEverythingOption);
    for (auto it = think.globalMatch(*text); it.hasNext();)
        out->reasoning += it.next().captured(1).trimmed() + QLatin1Char('\n');
    text->remove(think);
    if (const int unclosed = text->indexOf(QLatin1String("<think>")); unclosed >= 0) {
        out->reasoning += text->mid(unclosed + 7).trimmed();
        out->error = QStringLiteral("the reply ends inside <think>: the model was cut off while reasoning");
        return false;
    }
    return true;
}

// "**DESCRIPTION:** text**" or `text` or "text": drop the wrapping, keep the words.
QString unwrapDescription(QString description)
{
    while (description.endsWith(QLatin1Char('*')) || description.endsWith(QLatin1Char('_')))
        description.chop(1);
    description = description.trimmed();
    for (const QChar q : { QLatin1Char('`'), QLatin1Char('"'), QLatin1Char('\'') }) {
        if (description.size() >= 2 && description.startsWith(q) && description.endsWith(q))
            description = description.mid(1, description.size() - 2).trimmed();
    }
    return description;
}

// What one pass over the reply's lines finds: every fenced block, and the first DESCRIPTION label.
struct Scan
{
    QVector<Block> blocks;
    QString description;
    bool sawLabel = false;
};

Scan scanLines(const QStringList &lines)
{
    // Fences as CommonMark has them (``` or ~~~, three or more, closed by at least as many of the
    // same character), but any indentation: models indent blocks inside list items.
    static const QRegularExpression open(QStringLiteral(R"(^(\s*)(`{3,}|~{3,})\s*([^`\s]*).*$)"));
    // The label may sit in a list item, a quote or bold markup: "1. **Description:** ...".
    static const QRegularExpression label(
        QStringLiteral(R"(^(?:[\s>*_#+-]|\d+[.)])*description[\s*_]*:[\s*_]*(.*)$)"),
        QRegularExpression::CaseInsensitiveOption);

    Scan scan;
    Block *current = nullptr;
    QString fence;
    int indent = 0;
    for (int i = 0; i < lines.size(); ++i) {
        const QString &line = lines.at(i);
        if (current) {
            const QString t = line.trimmed();
            if (t.size() >= fence.size() && t == QString(t.size(), fence.at(0))) {
                current->closed = true;
                current = nullptr;
                continue;
            }
            int strip = 0;
            while (strip < indent && strip < line.size() && line.at(strip) == QLatin1Char(' '))
                ++strip;
            current->lines << line.mid(strip);
            continue;
        }
        const QRegularExpressionMatch m = open.match(line);
        if (m.hasMatch()) {
            scan.blocks.append(Block { m.captured(3).toLower(), {}, i + 1, false });
            current = &scan.blocks.last();
            indent = m.captured(1).size();
            fence = m.captured(2);
            continue;
        }
        const QRegularExpressionMatch d = label.match(line);
        if (d.hasMatch() && !scan.sawLabel) {
            scan.sawLabel = true;
            scan.description = unwrapDescription(d.captured(1).trimmed());
        }
    }
    return scan;
}

// The one closed python block (tagged python, or untagged and defining kernel_fn); null with *error
// set when there is none, more than one, or it is never closed.
const Block *thePythonBlock(const QVector<Block> &blocks, QString *error)
{
    QVector<const Block *> python;
    for (const Block &b : blocks) {
        if (isPythonTag(b.lang) || (b.lang.isEmpty() && definesKernelFn(b.lines.join(QLatin1Char('\n')))))
            python << &b;
    }
    if (python.isEmpty()) {
        *error = QStringLiteral("no ```python block in the reply; send the complete kernel.py in one");
        return nullptr;
    }
    if (python.size() > 1) {
        QStringList at;
        for (const Block *b : python)
            at << QString::number(b->line);
        *error = QStringLiteral("%1 python blocks in the reply (lines %2); send exactly one, holding the "
                                "complete kernel.py")
                     .arg(python.size())
                     .arg(at.join(QStringLiteral(", ")));
        return nullptr;
    }
    const Block *code = python.first();
    if (!code->closed) {
        *error = QStringLiteral("the python block opened at line %1 is never closed (reply truncated?)")
                     .arg(code->line);
        return nullptr;
    }
    return code;
}

} // namespace

ParsedReply ReplyParser::parse(const QString &reply)
{
    ParsedReply out;
    QString text = reply;
    text.replace(QLatin1String("\r\n"), QLatin1String("\n"));
    text.replace(QLatin1Char('\r'), QLatin1Char('\n'));
    if (!takeOutThinking(&text, &out))
        return out;
    const Scan scan = scanLines(text.split(QLatin1Char('\n')));
    const Block *code = thePythonBlock(scan.blocks, &out.error);
    if (!code)
        return out;
    QString kernel = code->lines.join(QLatin1Char('\n'));
    if (!definesKernelFn(kernel)) {
        out.error = QStringLiteral("the python block (line %1) does not define kernel_fn; send the complete "
                                   "kernel.py, not a fragment")
                        .arg(code->line);
        return out;
    }
    if (!scan.sawLabel) {
        out.error = QStringLiteral("no DESCRIPTION: line in the reply");
        return out;
    }
    QString description = scan.description;
    if (description.isEmpty()) {
        out.error = QStringLiteral("the DESCRIPTION: line is empty; write the one-line description on it");
        return out;
    }
    if (description.size() > kMaxDescription)
        description = description.left(kMaxDescription - 1) + QChar(0x2026);
    while (kernel.endsWith(QLatin1Char('\n')))
        kernel.chop(1);
    out.ok = true;
    out.kernelPy = kernel + QLatin1Char('\n');
    out.description = TerminalText::clean(description); // a commit subject, a table cell, a terminal line
    return out;
}

} // namespace ak
