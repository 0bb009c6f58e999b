#pragma once

#include "textdiff.h"
#include "unifieddiff.h"
#include "widgets/diffeditor.h"

#include <QSet>
#include <QWidget>

#include <array>

class QAction;
class QGridLayout;
class QLabel;
class QStackedLayout;

namespace ak {

class EmptyState;
class ReadableHighlighter;

// Qt Creator's side-by-side diff (or, switched by unifiedAction(), a unified one): old text left, new text
// right, padding rows so both sides have the same line count, scrolling kept in step (one vertical scroll
// bar), line backgrounds for removed / added lines and stronger ones for the changed characters, old / new
// line numbers in a gutter on each side. KSyntaxHighlighting colours the text (ReadableHighlighter: kept
// at 4.5:1 contrast on the diff's backgrounds); the diff only paints backgrounds.
class DiffView : public QWidget
{
    Q_OBJECT
public:
    explicit DiffView(QWidget *parent = nullptr);
    ~DiffView() override;

    // Diffs in the background (QtConcurrent); a later call or a message supersedes a running one.
    void showTexts(
        const QString &oldText, const QString &newText, const QString &oldTitle, const QString &newTitle);
    // Shows a computed diff now.
    void showDiff(const TextDiffResult &diff, const QString &oldTitle, const QString &newTitle);
    // Empty state or error instead of a diff.
    void showMessage(const QString &title, const QString &body);

    bool isShowingDiff() const;
    // The title above a side (side 1 holds both in unified mode): which commit is shown.
    QString title(int side) const;
    DiffEditor *editor(int side) const { return m_editors[size_t(side)]; }
    // Side and kind of each displayed row (after folding), for tests and the gutter.
    const QVector<DiffRow> &displayedRows() const { return m_rows; }
    // Index of the first removed or added line among the displayed lines (displayedRows() side by
    // side, unifiedLines() unified); -1 for identical texts.
    int firstChangedRow() const;

    // Unified mode: one column (the right editor), removed then added lines of each change. The
    // choice is saved in QSettings under kUnifiedSettingsKey and applies to the next DiffView too.
    bool isUnified() const;
    void setUnified(bool unified);
    QAction *unifiedAction() const { return m_unifiedAction; }
    // The lines the unified editor shows; empty side by side.
    const QVector<DiffLine> &unifiedLines() const { return m_unifiedLines; }
    static constexpr const char *kUnifiedSettingsKey = "diff/unified";

    // Folding (on unless the user turned it off, QSettings kFoldSettingsKey): kFoldContext unchanged
    // lines around each change, the rest of each stretch one clickable "N unchanged lines" row.
    bool isFolding() const;
    void setFolding(bool fold);
    // Shows the stretch folded at displayed line `line` (a click on its row); other lines: nothing.
    void expandAt(int line);
    static constexpr const char *kFoldSettingsKey = "diff/foldUnchanged";
    static constexpr int kFoldContext = 3;

    // Unchanged rows kept above the first change when a diff opens.
    static constexpr int kLinesAboveFirstChange = 3;

Q_SIGNALS:
    void diffShown();

protected:
    // A palette switched while the window is open (a dark theme, say) re-themes the highlighting.
    void changeEvent(QEvent *event) override;

private:
    // The constructor's steps: both sides (title, editor, highlighter, scroll sync), the view's
    // unified and fold switches, the title row with their buttons.
    void createSides(QGridLayout *grid);
    void createViewActions();
    void addHeader(QGridLayout *grid);
    void syncScroll(int fromSide, Qt::Orientation orientation, int value);
    void scrollToFirstChange();
    void render();
    void fillEditor(DiffEditor *edit, const QVector<DiffLine> &lines, bool bothNumbers);

    QStackedLayout *m_stack;
    EmptyState *m_empty;
    QWidget *m_diffPage;
    std::array<QLabel *, 2> m_titles {};
    std::array<DiffEditor *, 2> m_editors {};
    std::array<ReadableHighlighter *, 2> m_highlighters {};
    QVector<DiffRow> m_allRows; // every row of the diff
    QVector<DiffRow> m_rows; // m_allRows folded (or not): what side by side shows
    QVector<int> m_separatorKeys; // per separator row of m_rows: its fold key (foldUnchanged)
    QSet<int> m_expanded; // fold keys the user opened; reset by the next diff
    QAction *m_foldAction = nullptr;
    QVector<DiffLine> m_unifiedLines;
    QString m_oldTitle;
    QString m_newTitle;
    QAction *m_unifiedAction = nullptr;
    bool m_syncing = false; // re-entrancy guard: a synced scroll must not echo back
    quint64 m_generation = 0; // latest request wins; stale background results are dropped
};

} // namespace ak
