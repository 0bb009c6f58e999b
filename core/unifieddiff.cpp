#include "unifieddiff.h"

namespace ak {

namespace {

DiffLine lineOf(const DiffSide &side, int s)
{
    DiffLine line;
    line.text = side.text;
    line.kind = side.kind;
    line.changes = side.changes;
    (s == 0 ? line.oldNumber : line.newNumber) = side.lineNumber;
    return line;
}

bool isSeparator(const DiffRow &row)
{
    return row.side[0].kind == DiffLineKind::Padding && row.side[1].kind == DiffLineKind::Padding;
}

} // namespace

QVector<DiffLine> sideLines(const QVector<DiffRow> &rows, int side)
{
    QVector<DiffLine> lines;
    lines.reserve(rows.size());
    for (const DiffRow &row : rows)
        lines.append(lineOf(row.side[size_t(side)], side));
    return lines;
}

QVector<DiffLine> unifiedLines(const QVector<DiffRow> &rows)
{
    QVector<DiffLine> lines;
    lines.reserve(rows.size());
    QVector<DiffLine> added; // of the current run of changed rows, shown after its removed lines
    auto flush = [&] {
        lines += added;
        added.clear();
    };
    for (const DiffRow &row : rows) {
        if (isSeparator(row)) {
            flush();
            DiffLine sep = lineOf(row.side[0], 0);
            sep.oldNumber = 0;
            lines.append(sep);
        } else if (row.side[0].kind == DiffLineKind::Equal && row.side[1].kind == DiffLineKind::Equal) {
            flush();
            DiffLine line = lineOf(row.side[1], 1);
            line.oldNumber = row.side[0].lineNumber;
            lines.append(line);
        } else {
            if (row.side[0].kind == DiffLineKind::Removed)
                lines.append(lineOf(row.side[0], 0));
            if (row.side[1].kind == DiffLineKind::Added)
                added.append(lineOf(row.side[1], 1));
        }
    }
    flush();
    return lines;
}

} // namespace ak
