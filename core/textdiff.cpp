#include "textdiff.h"

#include <git2.h>

#include <algorithm>

namespace ak {

namespace {

struct Hunk
{
    int oldFirst = 0; // 0-based index of the first line the hunk touches (or inserts before)
    int oldCount = 0;
    int newFirst = 0;
    int newCount = 0;
};

QString stripCr(const QString &line)
{
    return line.endsWith(QLatin1Char('\r')) ? line.left(line.size() - 1) : line;
}

DiffSide side(const QStringList &lines, int index, DiffLineKind kind)
{
    DiffSide s;
    s.lineNumber = index + 1;
    s.text = stripCr(lines.at(index));
    s.kind = kind;
    return s;
}

DiffSide padding()
{
    DiffSide s;
    s.kind = DiffLineKind::Padding;
    return s;
}

// libgit2 with zero context; returns false and sets *error on failure.
bool lineHunks(const QString &oldText, const QString &newText, QVector<Hunk> *out, QString *error)
{
    git_libgit2_init();
    const QByteArray a = oldText.toUtf8();
    const QByteArray b = newText.toUtf8();
    git_diff_options opts;
    git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
    opts.context_lines = 0;
    opts.interhunk_lines = 0;
    opts.flags |= GIT_DIFF_FORCE_TEXT; // kernel.py may hold odd bytes; never fall back to "binary"
    git_patch *patch = nullptr;
    const int rc = git_patch_from_buffers(
        &patch, a.constData(), size_t(a.size()), "old", b.constData(), size_t(b.size()), "new", &opts);
    bool ok = rc == 0;
    if (!ok) {
        const git_error *e = git_error_last();
        *error = QStringLiteral("line diff failed: %1")
                     .arg(e ? QString::fromUtf8(e->message) : QStringLiteral("libgit2 error %1").arg(rc));
    } else {
        const size_t n = git_patch_num_hunks(patch);
        for (size_t i = 0; i < n; ++i) {
            const git_diff_hunk *h = nullptr;
            size_t linesInHunk = 0;
            if (git_patch_get_hunk(&h, &linesInHunk, patch, i) != 0)
                continue;
            // Unified-diff convention: a side with zero lines names the line *after which* the
            // change sits, otherwise the first changed line (both 1-based).
            Hunk hunk;
            hunk.oldCount = h->old_lines;
            hunk.newCount = h->new_lines;
            hunk.oldFirst = h->old_lines == 0 ? h->old_start : h->old_start - 1;
            hunk.newFirst = h->new_lines == 0 ? h->new_start : h->new_start - 1;
            out->append(hunk);
        }
    }
    git_patch_free(patch);
    git_libgit2_shutdown();
    return ok;
}

bool isChange(const DiffRow &row)
{
    return row.side[0].kind != DiffLineKind::Equal || row.side[1].kind != DiffLineKind::Equal;
}

struct Token
{
    int start;
    int length;
};

QVector<Token> tokenize(const QString &s)
{
    QVector<Token> tokens;
    int i = 0;
    const int n = s.size();
    auto word = [](QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_'); };
    while (i < n) {
        int j = i + 1;
        if (word(s[i])) {
            while (j < n && word(s[j]))
                ++j;
        } else if (s[i].isSpace()) {
            while (j < n && s[j].isSpace())
                ++j;
        }
        tokens.append({ i, j - i });
        i = j;
    }
    return tokens;
}

enum class Op { Equal, Delete, Insert };

struct Edit
{
    Op op;
    int a; // token index in old (Equal, Delete)
    int b; // token index in new (Equal, Insert)
};

void appendRange(QVector<DiffRange> *ranges, int start, int length)
{
    if (length <= 0)
        return;
    if (!ranges->isEmpty() && ranges->last().start + ranges->last().length == start)
        ranges->last().length += length;
    else
        ranges->append({ start, length });
}

} // namespace

QStringList TextDiff::splitLines(const QString &text)
{
    if (text.isEmpty())
        return {};
    QStringList lines = text.split(QLatin1Char('\n'));
    if (text.endsWith(QLatin1Char('\n')))
        lines.removeLast();
    return lines;
}

TextDiffResult TextDiff::compute(const QString &oldText, const QString &newText, int contextLines)
{
    TextDiffResult result;
    QVector<Hunk> hunks;
    if (!lineHunks(oldText, newText, &hunks, &result.error))
        return result;
    const QStringList oldLines = splitLines(oldText);
    const QStringList newLines = splitLines(newText);

    QVector<DiffRow> rows;
    int o = 0;
    int n = 0;
    auto equalUntil = [&](int oldEnd) {
        while (o < oldEnd && o < oldLines.size() && n < newLines.size()) {
            rows.append(DiffRow {
                { side(oldLines, o, DiffLineKind::Equal), side(newLines, n, DiffLineKind::Equal) } });
            ++o;
            ++n;
        }
    };
    for (const Hunk &h : hunks) {
        equalUntil(h.oldFirst);
        o = std::clamp(h.oldFirst, 0, int(oldLines.size()));
        n = std::clamp(h.newFirst, 0, int(newLines.size()));
        const int oldCount = std::min(h.oldCount, int(oldLines.size()) - o);
        const int newCount = std::min(h.newCount, int(newLines.size()) - n);
        for (int k = 0; k < std::max(oldCount, newCount); ++k) {
            DiffRow row { { k < oldCount ? side(oldLines, o + k, DiffLineKind::Removed) : padding(),
                k < newCount ? side(newLines, n + k, DiffLineKind::Added) : padding() } };
            if (k < oldCount && k < newCount) {
                const auto ranges = refineLine(row.side[0].text, row.side[1].text);
                row.side[0].changes = ranges[0];
                row.side[1].changes = ranges[1];
            }
            rows.append(row);
        }
        result.removed += oldCount;
        result.added += newCount;
        o += oldCount;
        n += newCount;
    }
    equalUntil(int(oldLines.size()));

    if (contextLines < 0) {
        if (!rows.isEmpty())
            result.chunks.append(DiffChunk { 0, rows });
        return result;
    }
    // Keep rows within contextLines of a change; the rest is counted, not shown.
    QVector<bool> keep(rows.size(), false);
    for (int i = 0; i < rows.size(); ++i) {
        if (!isChange(rows[i]))
            continue;
        for (int k = std::max(0, i - contextLines); k <= std::min(int(rows.size()) - 1, i + contextLines);
             ++k)
            keep[k] = true;
    }
    int skipped = 0;
    for (int i = 0; i < rows.size(); ++i) {
        if (!keep[i]) {
            ++skipped;
            continue;
        }
        if (result.chunks.isEmpty() || skipped > 0 || i == 0)
            result.chunks.append(DiffChunk { skipped, {} });
        result.chunks.last().rows.append(rows[i]);
        skipped = 0;
    }
    result.skippedAfter = skipped;
    return result;
}

std::array<QVector<DiffRange>, 2> TextDiff::refineLine(const QString &oldLine, const QString &newLine)
{
    std::array<QVector<DiffRange>, 2> out;
    if (oldLine == newLine)
        return out;
    const QVector<Token> ta = tokenize(oldLine);
    const QVector<Token> tb = tokenize(newLine);
    auto tokA = [&](int i) { return QStringView(oldLine).mid(ta[i].start, ta[i].length); };
    auto tokB = [&](int j) { return QStringView(newLine).mid(tb[j].start, tb[j].length); };
    const int n = ta.size();
    const int m = tb.size();

    // Very long lines: common prefix and suffix only, so a minified line cannot stall the view.
    if (qint64(n) * m > 200000) {
        int p = 0;
        while (p < oldLine.size() && p < newLine.size() && oldLine[p] == newLine[p])
            ++p;
        int s = 0;
        while (s < oldLine.size() - p && s < newLine.size() - p
            && oldLine[oldLine.size() - 1 - s] == newLine[newLine.size() - 1 - s])
            ++s;
        appendRange(&out[0], p, int(oldLine.size()) - p - s);
        appendRange(&out[1], p, int(newLine.size()) - p - s);
        return out;
    }

    // Longest common subsequence of tokens (lines are short; O(n*m) is cheaper than being clever).
    QVector<int> lcs((n + 1) * (m + 1), 0);
    auto at = [&](int i, int j) -> int & { return lcs[i * (m + 1) + j]; };
    for (int i = n - 1; i >= 0; --i)
        for (int j = m - 1; j >= 0; --j)
            at(i, j) = tokA(i) == tokB(j) ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    QVector<Edit> script;
    int i = 0;
    int j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && tokA(i) == tokB(j)) {
            script.append({ Op::Equal, i++, j++ });
        } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
            script.append({ Op::Insert, -1, j++ });
        } else {
            script.append({ Op::Delete, i++, -1 });
        }
    }
    // Semantic cleanup: an unchanged island of at most two characters between changes is part of
    // the change ("a.b" -> "x.y" reads as one replacement, not two).
    for (int k = 0; k < script.size();) {
        if (script[k].op != Op::Equal) {
            ++k;
            continue;
        }
        int end = k;
        int chars = 0;
        while (end < script.size() && script[end].op == Op::Equal)
            chars += ta[script[end++].a].length;
        if (k > 0 && end < script.size() && chars <= 2) {
            QVector<Edit> replaced;
            for (int e = k; e < end; ++e)
                replaced.append({ Op::Delete, script[e].a, -1 });
            for (int e = k; e < end; ++e)
                replaced.append({ Op::Insert, -1, script[e].b });
            script.remove(k, end - k);
            for (int e = 0; e < replaced.size(); ++e)
                script.insert(k + e, replaced[e]);
            end = k + int(replaced.size());
        }
        k = end;
    }
    // Deletes and inserts may interleave; collect per side in token order.
    QVector<int> deleted;
    QVector<int> inserted;
    for (const Edit &e : script) {
        if (e.op == Op::Delete)
            deleted.append(e.a);
        else if (e.op == Op::Insert)
            inserted.append(e.b);
    }
    std::sort(deleted.begin(), deleted.end());
    std::sort(inserted.begin(), inserted.end());
    for (int t : deleted)
        appendRange(&out[0], ta[t].start, ta[t].length);
    for (int t : inserted)
        appendRange(&out[1], tb[t].start, tb[t].length);
    return out;
}

} // namespace ak
