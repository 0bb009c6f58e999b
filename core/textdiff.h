#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

#include <array>

namespace ak {

// What one side of a side-by-side row shows.
enum class DiffLineKind { Equal, Removed, Added, Padding };

// A changed character range inside one line (intra-line highlight).
struct DiffRange
{
    int start = 0;
    int length = 0;
    bool operator==(const DiffRange &o) const { return start == o.start && length == o.length; }
};

// One line on one side. Padding rows exist so both sides have the same number of rows.
struct DiffSide
{
    int lineNumber = 0; // 1-based; 0 for padding
    QString text; // without the line terminator
    DiffLineKind kind = DiffLineKind::Equal;
    QVector<DiffRange> changes; // only on rows where both sides changed
};

// Side 0 is the old text, side 1 the new text (Qt Creator's std::array<..., 2> convention).
struct DiffRow
{
    std::array<DiffSide, 2> side;
};

// A run of rows shown together; with limited context, unchanged lines between chunks are skipped.
struct DiffChunk
{
    int skippedBefore = 0; // unchanged lines hidden before this chunk
    QVector<DiffRow> rows;
};

struct TextDiffResult
{
    QVector<DiffChunk> chunks;
    int skippedAfter = 0; // unchanged lines hidden after the last chunk
    int added = 0;
    int removed = 0;
    QString error; // set when libgit2 failed; chunks are then empty
    bool identical() const { return error.isEmpty() && added == 0 && removed == 0; }
};

// Line diff of two texts through libgit2 (git_patch_from_buffers, zero context), arranged side by
// side with padding, plus a token-level refinement of each changed line pair. Plain code, no GUI,
// safe to call from any thread.
class TextDiff
{
public:
    static constexpr int WholeFile = -1;

    // contextLines < 0: one chunk with every line of both texts.
    static TextDiffResult compute(
        const QString &oldText, const QString &newText, int contextLines = WholeFile);

    // Changed character ranges of a replaced line pair: [0] in oldLine, [1] in newLine. Tokens are
    // identifiers/numbers, whitespace runs and single punctuation characters; short unchanged
    // islands between changes are absorbed (semantic cleanup) so highlights read as words.
    static std::array<QVector<DiffRange>, 2> refineLine(const QString &oldLine, const QString &newLine);

    // Lines as libgit2 counts them: split at '\n', a final terminator does not start a new line.
    static QStringList splitLines(const QString &text);
};

} // namespace ak
