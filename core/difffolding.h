#pragma once

#include "textdiff.h"

#include <QSet>
#include <QVector>

namespace ak {

// Rows with the long unchanged stretches of a whole-file diff folded away.
struct FoldedRows
{
    QVector<DiffRow> rows;
    // One entry per separator row of `rows`, in order: the index in the input rows where its
    // folded stretch starts (the key to expand it), or -1 for a separator that was already in the
    // input (a limited-context diff's skipped lines: nothing to expand).
    QVector<int> separatorKeys;
};

// Keeps `context` unchanged rows next to each change and replaces the rest of each unchanged
// stretch by one "N unchanged lines" separator row (padding on both sides), as Qt Creator's diff
// editor does. A stretch whose key is in `expanded`, or that would hide fewer than two lines, stays
// whole; a diff without changes is not folded (there would be nothing left to read).
FoldedRows foldUnchanged(const QVector<DiffRow> &rows, int context, const QSet<int> &expanded);

// The separator row standing for `count` hidden unchanged lines.
DiffRow unchangedLinesRow(int count);

// Both sides padding: a separator, not a line of either text.
bool isSeparatorRow(const DiffRow &row);

} // namespace ak
