#include "difffolding.h"

#include <algorithm>

namespace ak {

namespace {

bool isUnchanged(const DiffRow &row)
{
    return row.side[0].kind == DiffLineKind::Equal && row.side[1].kind == DiffLineKind::Equal;
}

constexpr int kMinFolded = 2; // a separator replacing a single line saves nothing

} // namespace

bool isSeparatorRow(const DiffRow &row)
{
    return row.side[0].kind == DiffLineKind::Padding && row.side[1].kind == DiffLineKind::Padding;
}

DiffRow unchangedLinesRow(int count)
{
    DiffRow row;
    for (DiffSide &s : row.side) {
        s.kind = DiffLineKind::Padding;
        s.text = QStringLiteral("⋯ %1 unchanged line%2")
                     .arg(count)
                     .arg(count == 1 ? QString() : QStringLiteral("s"));
    }
    return row;
}

FoldedRows foldUnchanged(const QVector<DiffRow> &rows, int context, const QSet<int> &expanded)
{
    FoldedRows out;
    const bool anyChange = std::any_of(rows.begin(), rows.end(), [](const DiffRow &r) {
        return r.side[0].kind == DiffLineKind::Removed || r.side[1].kind == DiffLineKind::Added;
    });
    const int n = int(rows.size());
    int i = 0;
    while (i < n) {
        if (!anyChange || !isUnchanged(rows.at(i))) {
            out.rows.append(rows.at(i));
            if (isSeparatorRow(rows.at(i)))
                out.separatorKeys.append(-1);
            ++i;
            continue;
        }
        int j = i;
        while (j < n && isUnchanged(rows.at(j)))
            ++j;
        // Context only on the sides of the stretch that touch a change.
        const int head = i == 0 ? 0 : context;
        const int tail = j == n ? 0 : context;
        const int hidden = (j - i) - head - tail;
        if (hidden < kMinFolded || expanded.contains(i)) {
            out.rows += rows.mid(i, j - i);
        } else {
            out.rows += rows.mid(i, head);
            out.rows.append(unchangedLinesRow(hidden));
            out.separatorKeys.append(i);
            out.rows += rows.mid(j - tail, tail);
        }
        i = j;
    }
    return out;
}

} // namespace ak
