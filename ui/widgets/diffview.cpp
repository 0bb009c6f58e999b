#include "widgets/diffview.h"

#include "services/backgroundjob.h"
#include "widgets/readablehighlighter.h"

#include "difffolding.h"
#include "widgets/emptystate.h"
#include "widgets/syntaxrepository.h"

#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/SyntaxHighlighter>
#include <KSyntaxHighlighting/Theme>

#include <QAction>
#include <QEvent>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSettings>
#include <QStackedLayout>
#include <QTextBlock>
#include <QToolButton>

#include <algorithm>

namespace ak {

namespace {

// Translucent so the same colours work on light and dark palettes.
QColor lineColor(DiffLineKind kind)
{
    switch (kind) {
    case DiffLineKind::Removed:
        return QColor(220, 40, 60, 40);
    case DiffLineKind::Added:
        return QColor(40, 170, 70, 40);
    case DiffLineKind::Padding:
        return QColor(128, 128, 128, 40);
    case DiffLineKind::Equal:
        break;
    }
    return {};
}

QColor charColor(DiffLineKind kind)
{
    return kind == DiffLineKind::Removed ? QColor(220, 40, 60, 110) : QColor(40, 170, 70, 110);
}

QColor over(const QColor &top, const QColor &under)
{
    const double a = top.alphaF();
    return QColor::fromRgbF(float(top.redF() * a + under.redF() * (1 - a)),
        float(top.greenF() * a + under.greenF() * (1 - a)), float(top.blueF() * a + under.blueF() * (1 - a)));
}

// What highlighted text lies on under `palette`: the base, each line colour over it, each changed
// characters' colour over that line.
QVector<QColor> textBackgrounds(const QPalette &palette)
{
    const QColor base = palette.color(QPalette::Base);
    QVector<QColor> backgrounds { base };
    for (DiffLineKind kind : { DiffLineKind::Removed, DiffLineKind::Added }) {
        const QColor line = over(lineColor(kind), base);
        backgrounds << line << over(charColor(kind), line);
    }
    return backgrounds;
}

} // namespace

void DiffView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange)
        return;
    const auto theme = syntaxTheme(palette());
    const QVector<QColor> backgrounds = textBackgrounds(palette());
    for (auto *hl : m_highlighters) {
        if (!hl)
            continue;
        const bool newTheme = hl->theme().name() != theme.name();
        if (newTheme)
            hl->setTheme(theme);
        if (hl->setBackgrounds(backgrounds) || newTheme)
            hl->rehighlight();
    }
}

DiffView::DiffView(QWidget *parent)
    : QWidget(parent)
    , m_stack(new QStackedLayout(this))
    , m_empty(new EmptyState(this))
    , m_diffPage(new QWidget(this))
{
    m_empty->setObjectName(QStringLiteral("DiffEmptyState"));
    setObjectName(QStringLiteral("DiffView"));
    auto *grid = new QGridLayout(m_diffPage);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(2);
    grid->setVerticalSpacing(2);
    createSides(grid);
    createViewActions();
    addHeader(grid);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_diffPage);
    showMessage(tr("No commit selected"),
        tr("Select an experiment in the commit list to see its change to kernel.py."));
}

void DiffView::createSides(QGridLayout *grid)
{
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const auto theme = syntaxTheme(palette());
    const auto python = syntaxRepository().definitionForName(tr("Python"));
    for (int s = 0; s < 2; ++s) {
        auto *title = new QLabel(m_diffPage);
        title->setTextInteractionFlags(Qt::TextSelectableByMouse);
        // A long title must not widen its side: the editors stay equally wide (full text in tooltip).
        title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        auto *edit = new DiffEditor(m_diffPage);
        edit->setFont(mono);
        auto *hl = new ReadableHighlighter(edit->document());
        hl->setTheme(theme);
        hl->setBackgrounds(textBackgrounds(palette()));
        hl->setDefinition(python);
        m_titles[size_t(s)] = title;
        m_editors[size_t(s)] = edit;
        m_highlighters[size_t(s)] = hl;
        grid->addWidget(edit, 1, s);
        grid->setColumnStretch(s, 1); // both sides equally wide
        connect(edit->verticalScrollBar(), &QScrollBar::valueChanged, this,
            [this, s](int v) { syncScroll(s, Qt::Vertical, v); });
        connect(edit->horizontalScrollBar(), &QScrollBar::valueChanged, this,
            [this, s](int v) { syncScroll(s, Qt::Horizontal, v); });
    }
    // One vertical scroll bar for both sides, on the right (Qt Creator).
    m_editors[0]->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Tab leaves the diff (it is read-only: nothing to indent); focus on the view lands on the new
    // side, the one shown in both layouts, so the window's Tab order can name the view.
    for (DiffEditor *edit : m_editors)
        edit->setTabChangesFocus(true);
    setFocusProxy(m_editors[1]);
    // A click on a folded "N unchanged lines" row shows the stretch.
    for (int s = 0; s < 2; ++s)
        connect(
            m_editors[size_t(s)], &DiffEditor::blockClicked, this, [this](int block) { expandAt(block); });
}

void DiffView::createViewActions()
{
    // Side-by-side or unified, a per-user preference like Qt Creator's diff editor switch.
    m_unifiedAction = new QAction(tr("Unified"), this);
    m_unifiedAction->setCheckable(true);
    m_unifiedAction->setToolTip(tr("One column: each change's removed lines, then its added lines"));
    m_unifiedAction->setChecked(QSettings().value(QLatin1String(kUnifiedSettingsKey), false).toBool());
    connect(m_unifiedAction, &QAction::toggled, this, [this](bool unified) {
        QSettings().setValue(QLatin1String(kUnifiedSettingsKey), unified);
        if (!isShowingDiff())
            return; // the next diff opens in the chosen mode
        render();
        scrollToFirstChange();
    });
    // Long unchanged stretches folded to "N unchanged lines" rows; a click on one shows it.
    m_foldAction = new QAction(tr("Fold Unchanged"), this);
    m_foldAction->setObjectName(QStringLiteral("FoldUnchangedAction"));
    m_foldAction->setCheckable(true);
    m_foldAction->setToolTip(
        tr("Show %1 unchanged lines around each change; click a folded row to show it").arg(kFoldContext));
    m_foldAction->setChecked(QSettings().value(QLatin1String(kFoldSettingsKey), true).toBool());
    connect(m_foldAction, &QAction::toggled, this, [this](bool fold) {
        QSettings().setValue(QLatin1String(kFoldSettingsKey), fold);
        if (!isShowingDiff())
            return;
        render();
        scrollToFirstChange();
    });
}

void DiffView::addHeader(QGridLayout *grid)
{
    auto *foldButton = new QToolButton(m_diffPage);
    foldButton->setDefaultAction(m_foldAction);
    foldButton->setAutoRaise(true);
    auto *modeButton = new QToolButton(m_diffPage);
    modeButton->setDefaultAction(m_unifiedAction);
    modeButton->setAutoRaise(true);
    // The buttons share the new side's title row, so both editors stay equally wide.
    grid->addWidget(m_titles[0], 0, 0);
    auto *rightHeader = new QHBoxLayout;
    rightHeader->addWidget(m_titles[1], 1);
    rightHeader->addWidget(foldButton);
    rightHeader->addWidget(modeButton);
    grid->addLayout(rightHeader, 0, 1);
}

DiffView::~DiffView() = default;

void DiffView::syncScroll(int fromSide, Qt::Orientation orientation, int value)
{
    if (m_syncing || isUnified()) // unified: the old side is hidden and holds nothing
        return;
    m_syncing = true;
    DiffEditor *other = m_editors[size_t(1 - fromSide)];
    QScrollBar *bar = orientation == Qt::Vertical ? other->verticalScrollBar() : other->horizontalScrollBar();
    bar->setValue(value);
    m_syncing = false;
}

void DiffView::showTexts(
    const QString &oldText, const QString &newText, const QString &oldTitle, const QString &newTitle)
{
    const quint64 generation = ++m_generation;
    runInBackground(
        this, [oldText, newText] { return TextDiff::compute(oldText, newText); },
        [this, generation, oldTitle, newTitle](const TextDiffResult &result) {
            if (generation != m_generation)
                return; // superseded while computing
            if (!result.error.isEmpty())
                showMessage(tr("Cannot show this change"), result.error);
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

QString DiffView::title(int side) const
{
    return m_titles[size_t(side)]->text();
}

bool DiffView::isShowingDiff() const
{
    return m_stack->currentWidget() == m_diffPage;
}

void DiffView::showDiff(const TextDiffResult &diff, const QString &oldTitle, const QString &newTitle)
{
    m_allRows.clear();
    for (const DiffChunk &chunk : diff.chunks) {
        if (chunk.skippedBefore > 0)
            m_allRows.append(unchangedLinesRow(chunk.skippedBefore));
        m_allRows += chunk.rows;
    }
    if (diff.skippedAfter > 0)
        m_allRows.append(unchangedLinesRow(diff.skippedAfter));
    m_expanded.clear();
    m_oldTitle = oldTitle;
    m_newTitle = diff.identical()
        ? tr("%1 (identical)").arg(newTitle)
        : QStringLiteral("%1 (+%2 −%3)").arg(newTitle).arg(diff.added).arg(diff.removed);
    render();
    m_stack->setCurrentWidget(m_diffPage);
    scrollToFirstChange();
    Q_EMIT diffShown();
}

bool DiffView::isFolding() const
{
    return m_foldAction->isChecked();
}

void DiffView::setFolding(bool fold)
{
    m_foldAction->setChecked(fold);
}

void DiffView::expandAt(int line)
{
    // The n-th separator on screen is the n-th in m_separatorKeys, in either mode (unified keeps
    // separator rows once, in order).
    int separator = 0;
    if (isUnified()) {
        if (line < 0 || line >= m_unifiedLines.size()
            || m_unifiedLines.at(line).kind != DiffLineKind::Padding)
            return;
        for (int i = 0; i < line; ++i)
            separator += m_unifiedLines.at(i).kind == DiffLineKind::Padding ? 1 : 0;
    } else {
        if (line < 0 || line >= m_rows.size() || !isSeparatorRow(m_rows.at(line)))
            return;
        for (int i = 0; i < line; ++i)
            separator += isSeparatorRow(m_rows.at(i)) ? 1 : 0;
    }
    const int key = separator < m_separatorKeys.size() ? m_separatorKeys.at(separator) : -1;
    if (key < 0)
        return; // skipped by a limited-context diff: the lines are not here to show
    m_expanded.insert(key);
    // The stretch opens where its row was: keep the view where the reader is.
    const int top = m_editors[1]->verticalScrollBar()->value();
    render();
    for (DiffEditor *edit : m_editors)
        edit->verticalScrollBar()->setValue(top);
}

bool DiffView::isUnified() const
{
    return m_unifiedAction->isChecked();
}

void DiffView::setUnified(bool unified)
{
    m_unifiedAction->setChecked(unified);
}

void DiffView::render()
{
    if (isFolding()) {
        FoldedRows folded = foldUnchanged(m_allRows, kFoldContext, m_expanded);
        m_rows = std::move(folded.rows);
        m_separatorKeys = std::move(folded.separatorKeys);
    } else {
        m_rows = m_allRows;
        m_separatorKeys.clear();
    }
    const bool unified = isUnified();
    m_titles[0]->setVisible(!unified);
    m_editors[0]->setVisible(!unified);
    // An empty column with a stretch still takes its share: unified gives the new side all of it.
    static_cast<QGridLayout *>(m_diffPage->layout())->setColumnStretch(0, unified ? 0 : 1);
    if (unified) {
        m_unifiedLines = ak::unifiedLines(m_rows);
        m_titles[1]->setText(QStringLiteral("%1 → %2").arg(m_oldTitle, m_newTitle));
    } else {
        m_unifiedLines.clear();
        m_titles[0]->setText(m_oldTitle);
        m_titles[1]->setText(m_newTitle);
    }
    for (QLabel *title : m_titles)
        title->setToolTip(title->text());
    if (unified) {
        fillEditor(m_editors[0], {}, false);
        fillEditor(m_editors[1], m_unifiedLines, true);
    } else {
        for (int s = 0; s < 2; ++s)
            fillEditor(m_editors[size_t(s)], sideLines(m_rows, s), false);
    }
}

void DiffView::fillEditor(DiffEditor *edit, const QVector<DiffLine> &lines, bool bothNumbers)
{
    QStringList texts;
    QVector<int> oldNumbers, newNumbers;
    texts.reserve(lines.size());
    for (const DiffLine &line : lines) {
        texts << line.text;
        oldNumbers << line.oldNumber;
        newNumbers << line.newNumber;
    }
    edit->setPlainText(texts.join(QLatin1Char('\n')));
    if (bothNumbers)
        edit->setLineNumbers({ oldNumbers, newNumbers });
    else
        edit->setLineNumbers({ edit == m_editors[0] ? oldNumbers : newNumbers });

    QList<QTextEdit::ExtraSelection> selections;
    QTextCursor cursor(edit->document());
    cursor.beginEditBlock();
    QTextBlock block = edit->document()->firstBlock();
    for (const DiffLine &line : lines) {
        if (!block.isValid())
            break;
        const QColor bg = lineColor(line.kind);
        if (bg.isValid()) {
            QTextBlockFormat fmt;
            fmt.setBackground(bg);
            cursor.setPosition(block.position());
            cursor.setBlockFormat(fmt);
        }
        for (const DiffRange &r : line.changes) {
            QTextEdit::ExtraSelection sel;
            sel.cursor = QTextCursor(edit->document());
            sel.cursor.setPosition(block.position() + r.start);
            sel.cursor.setPosition(block.position() + r.start + r.length, QTextCursor::KeepAnchor);
            sel.format.setBackground(charColor(line.kind));
            selections.append(sel);
        }
        block = block.next();
    }
    cursor.endEditBlock();
    edit->setExtraSelections(selections);
}

int DiffView::firstChangedRow() const
{
    if (isUnified()) {
        for (int i = 0; i < m_unifiedLines.size(); ++i)
            if (m_unifiedLines.at(i).kind == DiffLineKind::Removed
                || m_unifiedLines.at(i).kind == DiffLineKind::Added)
                return i;
        return -1;
    }
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
    for (DiffEditor *edit : m_editors) { // the hidden old side of unified mode is empty: harmless
        edit->horizontalScrollBar()->setValue(0);
        edit->verticalScrollBar()->setValue(target);
    }
}

} // namespace ak
