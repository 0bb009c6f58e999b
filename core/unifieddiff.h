#pragma once

#include "textdiff.h"

#include <QVector>

namespace ak {

// One displayed line of a diff editor: side-by-side shows one side of a row, unified one line of
// either side. Numbers are 1-based, 0 where the line has none on that side (added / removed lines,
// padding, "N unchanged lines" separators).
struct DiffLine
{
    QString text;
    DiffLineKind kind = DiffLineKind::Equal;
    QVector<DiffRange> changes;
    int oldNumber = 0;
    int newNumber = 0;
};

// The unified arrangement of side-by-side rows, as `git diff` shows it: an unchanged row once, each
// run of changed rows as its removed lines then its added lines (padding dropped), separator rows
// (padding on both sides) kept once. Intra-line changes stay on their lines.
QVector<DiffLine> unifiedLines(const QVector<DiffRow> &rows);

// One side of side-by-side rows as displayed lines (padding included, so both sides stay aligned).
QVector<DiffLine> sideLines(const QVector<DiffRow> &rows, int side);

} // namespace ak
