#include "diffview.h"

#include "backgroundjob.h"

#include "emptystate.h"
#include "syntaxrepository.h"

#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/SyntaxHighlighter>
#include <KSyntaxHighlighting/Theme>

#include <QFontDatabase>
#include <QGridLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QStackedLayout>
#include <QTextBlock>

#include <algorithm>

namespace ak {

namespace {

// Translucent so the same colours work on light and dark palettes.
QColor lineColor(DiffLineKind kind)
{
    switch (kind) {
    case DiffLineKind::Removed: return QColor(220, 40, 60, 40);
    case DiffLineKind::Added: return QColor(40, 170, 70, 40);
    case DiffLineKind::Padding: return QColor(128, 128, 128, 40);
    case DiffLineKind::Equal: break;
    }
    return {};
}

QColor charColor(DiffLineKind kind)
{
    return kind == DiffLineKind::Removed ? QColor(220, 40, 60, 110) : QColor(40, 170, 70, 110);
}

DiffRow separatorRow(int skipped)
{
    DiffRow row;
    for (DiffSide &s : row.side) {
        s.kind = DiffLineKind::Padding;
        s.text = QStringLiteral("⋯ %1 unchanged line%2").arg(skipped).arg(skipped == 1 ? QString() : QStringLiteral("s"));
    }
    return row;
}

} // namespace

DiffView::DiffView(QWidget *parent)
    : QWidget(parent)
    , m_stack(new QStackedLayout(this))
    , m_empty(new EmptyState(this))
    , m_diffPage(new QWidget(this))
{
    auto *grid = new QGridLayout(m_diffPage);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(2);
    grid->setVerticalSpacing(2);
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const auto theme = syntaxTheme(palette());
    const auto python = syntaxRepository().definitionForName(QStringLiteral("Python"));
    for (int s = 0; s < 2; ++s) {
        auto *title = new QLabel(m_diffPage);
        title->setTextInteractionFlags(Qt::TextSelectableByMouse);
        auto *edit = new DiffEditor(m_diffPage);
        edit->setFont(mono);
        auto *hl = new KSyntaxHighlighting::SyntaxHighlighter(edit->document());
        hl->setTheme(theme);
        hl->setDefinition(python);
        m_titles[size_t(s)] = title;
        m_editors[size_t(s)] = edit;
        m_highlighters[size_t(s)] = hl;
        grid->addWidget(title, 0, s);
        grid->addWidget(edit, 1, s);
        connect(edit->verticalScrollBar(), &QScrollBar::valueChanged, this,
                [this, s](int v) { syncScroll(s, Qt::Vertical, v); });
        connect(edit->horizontalScrollBar(), &QScrollBar::valueChanged, this,
                [this, s](int v) { syncScroll(s, Qt::Horizontal, v); });
    }
    // One vertical scroll bar for both sides, on the right (Qt Creator).
    m_editors[0]->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_diffPage);
    showMessage(QStringLiteral("No commit selected"),
                QStringLiteral("Select an experiment in the commit list to see its change to kernel.py."));
}

DiffView::~DiffView() = default;

void DiffView::syncScroll(int fromSide, Qt::Orientation orientation, int value)
{
    if (m_syncing)
        return;
    m_syncing = true;
    DiffEditor *other = m_editors[size_t(1 - fromSide)];
    QScrollBar *bar = orientation == Qt::Vertical ? other->verticalScrollBar() : other->horizontalScrollBar();
    bar->setValue(value);
    m_syncing = false;
}

void DiffView::showTexts(const QString &oldText, const QString &newText, const QString &oldTitle, const QString &newTitle)
{
    const quint64 generation = ++m_generation;
    runInBackground(
        this, [oldText, newText] { return TextDiff::compute(oldText, newText); },
        [this, generation, oldTitle, newTitle](const TextDiffResult &result) {
            if (generation != m_generation)
                return; // superseded while computing
            if (!result.error.isEmpty())
                showMessage(QStringLiteral("Cannot show this change"), result.error);
            else
                showDiff(result, oldTitle, newTitle);
        });
}

void DiffView::showMessage(const QString &title, const QString &body)
{
    ++m_generation;
    m_empty->setMessage(title, body);
    m_stack->setCurrentWidget(m_empty);
}

bool DiffView::isShowingDiff() const
{
    return m_stack->currentWidget() == m_diffPage;
}

void DiffView::showDiff(const TextDiffResult &diff, const QString &oldTitle, const QString &newTitle)
{
    m_rows.clear();
    for (const DiffChunk &chunk : diff.chunks) {
        if (chunk.skippedBefore > 0)
            m_rows.append(separatorRow(chunk.skippedBefore));
        m_rows += chunk.rows;
    }
    if (diff.skippedAfter > 0)
        m_rows.append(separatorRow(diff.skippedAfter));

    m_titles[0]->setText(oldTitle);
    m_titles[1]->setText(diff.identical() ? QStringLiteral("%1 (identical)").arg(newTitle)
                                          : QStringLiteral("%1 (+%2 −%3)").arg(newTitle).arg(diff.added).arg(diff.removed));
    for (int s = 0; s < 2; ++s) {
        DiffEditor *edit = m_editors[size_t(s)];
        QStringList lines;
        QVector<int> numbers;
        lines.reserve(m_rows.size());
        numbers.reserve(m_rows.size());
        for (const DiffRow &row : m_rows) {
            lines << row.side[size_t(s)].text;
            numbers << row.side[size_t(s)].lineNumber; // 0 on padding and separator rows
        }
        edit->setPlainText(lines.join(QLatin1Char('\n')));
        edit->setLineNumbers({numbers});

        QList<QTextEdit::ExtraSelection> selections;
        QTextCursor cursor(edit->document());
        cursor.beginEditBlock();
        QTextBlock block = edit->document()->firstBlock();
        for (const DiffRow &row : m_rows) {
            if (!block.isValid())
                break;
            const DiffSide &side = row.side[size_t(s)];
            const QColor bg = lineColor(side.kind);
            if (bg.isValid()) {
                QTextBlockFormat fmt;
                fmt.setBackground(bg);
                cursor.setPosition(block.position());
                cursor.setBlockFormat(fmt);
            }
            for (const DiffRange &r : side.changes) {
                QTextEdit::ExtraSelection sel;
                sel.cursor = QTextCursor(edit->document());
                sel.cursor.setPosition(block.position() + r.start);
                sel.cursor.setPosition(block.position() + r.start + r.length, QTextCursor::KeepAnchor);
                sel.format.setBackground(charColor(side.kind));
                selections.append(sel);
            }
            block = block.next();
        }
        cursor.endEditBlock();
        edit->setExtraSelections(selections);
    }
    m_stack->setCurrentWidget(m_diffPage);
    scrollToFirstChange();
    Q_EMIT diffShown();
}

int DiffView::firstChangedRow() const
{
    for (int i = 0; i < m_rows.size(); ++i) {
        const DiffRow &row = m_rows.at(i);
        // Separator rows are padding on both sides; only a real removed / added line counts.
        if (row.side[0].kind == DiffLineKind::Removed || row.side[1].kind == DiffLineKind::Added)
            return i;
    }
    return -1;
}

void DiffView::scrollToFirstChange()
{
    // A reviewer wants the change, not the imports: open with the first changed row near the top,
    // a few unchanged lines above it for orientation. QPlainTextEdit scrolls by blocks (rows).
    const int first = firstChangedRow();
    const int target = first < 0 ? 0 : std::max(0, first - kLinesAboveFirstChange);
    for (DiffEditor *edit : m_editors) {
        edit->horizontalScrollBar()->setValue(0);
        edit->verticalScrollBar()->setValue(target);
    }
}

} // namespace ak
