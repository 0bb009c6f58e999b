#include "testfixtures.h"
#include "testpalettes.h"
#include "testregistry.h"
#include "widgets/diffview.h"
#include "widgets/emptystate.h"

#include <QAction>
#include <QApplication>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStyle>
#include <QTextBlock>
#include <QTextLayout>

#include <algorithm>
#include <cmath>

using ak::DiffEditor;
using ak::DiffView;

namespace {

// WCAG 2 relative luminance and contrast ratio (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio).
double luminance(const QColor &c)
{
    auto linear = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// `over` drawn on `under` (alpha blending), as the intra-line change colour lies on the line's.
QColor blend(const QColor &over, const QColor &under)
{
    const double a = over.alphaF();
    return QColor::fromRgbF(float(over.redF() * a + under.redF() * (1 - a)),
        float(over.greenF() * a + under.greenF() * (1 - a)),
        float(over.blueF() * a + under.blueF() * (1 - a)));
}

QString numbered(int n, int changedLine, const QString &changed)
{
    QStringList lines;
    for (int i = 1; i <= n; ++i)
        lines << (i == changedLine ? changed : QStringLiteral("x%1 = %1").arg(i));
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

} // namespace

class DiffViewTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        // Each test starts with the defaults (side by side, folded), whatever an earlier one chose.
        QSettings().remove(QLatin1String(DiffView::kUnifiedSettingsKey));
        QSettings().remove(QLatin1String(DiffView::kFoldSettingsKey));
    }

    // A palette switched live (to a dark one) re-themes the highlighting, as it does the window.
    void highlightingFollowsAPaletteSwitch()
    {
        DiffView view;
        view.setPalette(QPalette(Qt::black, Qt::white)); // light base
        view.showTexts(QStringLiteral("def f():\n    return 1\n"), QStringLiteral("def g():\n    return 2\n"),
            QStringLiteral("a"), QStringLiteral("b"));
        const auto keywordColour = [&view] {
            // The colour the highlighter gave "def" on the first line of the editor that shows it.
            for (QPlainTextEdit *edit : view.findChildren<QPlainTextEdit *>()) {
                const QTextBlock block = edit->document()->firstBlock();
                for (const QTextLayout::FormatRange &r : block.layout()->formats())
                    if (r.start == 0 && r.length >= 3 && block.text().startsWith(QLatin1String("def")))
                        return r.format.foreground().color();
            }
            return QColor();
        };
        QTRY_VERIFY_WITH_TIMEOUT(keywordColour().isValid(), 5000);
        const QColor light = keywordColour();
        QPalette dark(Qt::white, Qt::black);
        dark.setColor(QPalette::Base, Qt::black);
        view.setPalette(dark);
        QTRY_VERIFY_WITH_TIMEOUT(keywordColour().isValid() && keywordColour() != light, 5000);
    }

    // Issue #14: in a dark theme the diff's identifiers became unreadable. Grabbed under a light and a
    // dark palette, every highlighted token of a changed line has a WCAG contrast of at least 4.5:1
    // against its line's background as painted (and against the stronger intra-line change colour).
    void highlightedTextIsReadableOnLightAndDark()
    {
        const QString oldText = QStringLiteral(
            "import math\n\ndef scale(x, n=2):\n    # double the input\n    return x * n  # old\n");
        const QString newText = QStringLiteral("import math\n\ndef scale(x, n=3):\n    # triple the input, "
                                               "\"fast\"\n    return math.floor(x * n + 0.5)  # new\n");
        for (const bool dark : { false, true }) {
            DiffView view;
            view.setPalette(dark ? ak::test::darkPalette() : QApplication::style()->standardPalette());
            view.resize(1000, 300);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            QSignalSpy shown(&view, &DiffView::diffShown);
            view.showTexts(oldText, newText, QStringLiteral("old"), QStringLiteral("new"));
            QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 5000);
            // The highlighter formats the changed lines (it runs from the event loop).
            QTRY_VERIFY_WITH_TIMEOUT(
                !view.editor(1)->document()->findBlockByNumber(3).layout()->formats().isEmpty(), 5000);
            const QImage shot = view.grab().toImage();
            int tokens = 0;
            double worst = 100;
            QString worstWhat;
            for (int side = 0; side < 2; ++side) {
                DiffEditor *edit = view.editor(side);
                const QColor plain = edit->palette().color(QPalette::Text);
                for (QTextBlock block = edit->document()->firstBlock(); block.isValid();
                     block = block.next()) {
                    if (!block.blockFormat().hasProperty(QTextFormat::BackgroundBrush))
                        continue; // unchanged lines: the editor's base, which the theme is chosen for
                    // The line's background as painted: a pixel right of the text.
                    QTextCursor end(block);
                    end.movePosition(QTextCursor::EndOfBlock);
                    const QRect caret = edit->cursorRect(end);
                    const QPoint at
                        = edit->viewport()->mapTo(&view, QPoint(caret.right() + 12, caret.center().y()));
                    QVERIFY(shot.rect().contains(at));
                    const QColor background = shot.pixelColor(at);
                    const QColor strong
                        = blend(side == 0 ? QColor(220, 40, 60, 110) : QColor(40, 170, 70, 110),
                            background); // the changed characters' colour (removed left, added right)
                    // Every character's colour: its highlighter format's, else the palette's text.
                    for (int i = 0; i < block.length() - 1; ++i) {
                        if (block.text().at(i).isSpace())
                            continue;
                        QColor fg = plain;
                        for (const QTextLayout::FormatRange &r : block.layout()->formats())
                            if (i >= r.start && i < r.start + r.length
                                && r.format.hasProperty(QTextFormat::ForegroundBrush))
                                fg = r.format.foreground().color();
                        ++tokens;
                        for (const QColor &bg : { background, strong }) {
                            const double ratio = contrast(fg, bg);
                            if (ratio < worst) {
                                worst = ratio;
                                worstWhat = QStringLiteral("'%1' in \"%2\": %3 on %4")
                                                .arg(block.text().at(i), block.text(), fg.name(), bg.name());
                            }
                        }
                    }
                }
            }
            QVERIFY(tokens > 50); // changed lines were found and measured
            QVERIFY2(worst >= 4.5,
                qPrintable(QStringLiteral("%1 palette: contrast %2:1 for %3")
                               .arg(dark ? QStringLiteral("dark") : QStringLiteral("light"))
                               .arg(worst, 0, 'f', 2)
                               .arg(worstWhat)));
        }
    }

    void emptyStateBeforeSelection()
    {
        DiffView view;
        QVERIFY(!view.isShowingDiff());
        QVERIFY(ak::test::named<ak::EmptyState>(&view, "DiffEmptyState")
                    ->title()
                    .contains(QStringLiteral("No commit selected")));
    }

    void sidesHaveEqualLineCounts()
    {
        DiffView view;
        view.resize(900, 400);
        view.show();
        const QString oldText
            = QStringLiteral("import triton\nBLOCK = 64\n\ndef kernel_fn(x):\n    return x\n");
        const QString newText = QStringLiteral(
            "import triton\nimport torch\nBLOCK = 128\nWARPS = 4\n\ndef kernel_fn(x):\n    return x\n");
        view.showDiff(ak::TextDiff::compute(oldText, newText), QStringLiteral("old"), QStringLiteral("new"));
        QVERIFY(view.isShowingDiff());
        const int left = view.editor(0)->document()->blockCount();
        const int right = view.editor(1)->document()->blockCount();
        QCOMPARE(left, right);
        QCOMPARE(right, 7); // the new text; the old side is padded
        // The padded left side still holds exactly the old text, in order.
        QStringList leftLines;
        for (const ak::DiffRow &row : view.displayedRows())
            if (row.side[0].kind != ak::DiffLineKind::Padding)
                leftLines << row.side[0].text;
        QCOMPARE(leftLines, ak::TextDiff::splitLines(oldText));
        // Line backgrounds mark removed / added / padding rows; intra-line highlights exist.
        int coloured = 0;
        for (QTextBlock b = view.editor(0)->document()->firstBlock(); b.isValid(); b = b.next())
            coloured += b.blockFormat().hasProperty(QTextFormat::BackgroundBrush) ? 1 : 0;
        QVERIFY(coloured >= 2);
        QVERIFY(!view.editor(1)->extraSelections().isEmpty()); // "64" -> "128"
    }

    void scrollingIsSynchronised()
    {
        DiffView view;
        view.resize(800, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setFolding(false); // the whole file, to have something to scroll
        const QString a = numbered(300, 150, QStringLiteral("changed = 1"));
        const QString b = numbered(300, 150, QStringLiteral("changed = 2"));
        view.showDiff(ak::TextDiff::compute(a, b), QStringLiteral("a"), QStringLiteral("b"));
        QCoreApplication::processEvents();
        QScrollBar *right = view.editor(1)->verticalScrollBar();
        QScrollBar *left = view.editor(0)->verticalScrollBar();
        QVERIFY(right->maximum() > 50);
        right->setValue(120);
        QCOMPARE(left->value(), 120);
        left->setValue(30);
        QCOMPARE(right->value(), 30);
        QCOMPARE(view.editor(0)->verticalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
    }

    void opensAtFirstChange()
    {
        DiffView view;
        view.resize(800, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy shown(&view, &DiffView::diffShown);
        view.setFolding(false); // the whole file: the change is far below the top
        const QString a = numbered(300, 200, QStringLiteral("changed = 1"));
        const QString b = numbered(300, 200, QStringLiteral("changed = 2"));
        view.showTexts(a, b, QStringLiteral("a"), QStringLiteral("b"));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 5000);
        QCOMPARE(view.firstChangedRow(), 199);
        QCoreApplication::processEvents();
        // Both sides show the first changed row, a few unchanged lines below the top.
        for (int s = 0; s < 2; ++s) {
            QPlainTextEdit *edit = view.editor(s);
            const int top = edit->verticalScrollBar()->value();
            QCOMPARE(top, 199 - DiffView::kLinesAboveFirstChange);
            const QTextBlock changed = edit->document()->findBlockByNumber(199);
            const QRect visible = edit->viewport()->rect();
            const QRectF box = edit->cursorRect(QTextCursor(changed));
            QVERIFY2(visible.contains(box.toRect().center()), qPrintable(QStringLiteral("side %1").arg(s)));
        }
        // An identical text opens at the top.
        view.showDiff(ak::TextDiff::compute(a, a), QStringLiteral("a"), QStringLiteral("a"));
        QCOMPARE(view.firstChangedRow(), -1);
        QCOMPARE(view.editor(1)->verticalScrollBar()->value(), 0);
    }

    void gutterShowsOldAndNewLineNumbers()
    {
        DiffView view;
        view.resize(900, 400);
        view.show();
        // Line 2 removed, two lines added after line 3: the sides' numbers drift apart.
        const QString oldText = QStringLiteral("a\nb\nc\nd\n");
        const QString newText = QStringLiteral("a\nc\nx\ny\nd\n");
        view.showDiff(ak::TextDiff::compute(oldText, newText), QStringLiteral("old"), QStringLiteral("new"));
        const QVector<ak::DiffRow> &rows = view.displayedRows();
        QStringList left, right;
        for (int i = 0; i < rows.size(); ++i) {
            left << view.editor(0)->gutterText(i);
            right << view.editor(1)->gutterText(i);
        }
        // Rows: a | b removed | c | x, y added | d; padding rows show no number.
        QCOMPARE(left, (QStringList { "1", "2", "3", "", "", "4" }));
        QCOMPARE(right, (QStringList { "1", "", "2", "3", "4", "5" }));
        for (int s = 0; s < 2; ++s) {
            QVERIFY(view.editor(s)->gutterWidth() > 0);
            QVERIFY(view.editor(s)->viewport()->geometry().left()
                >= view.editor(s)->gutterWidth()); // text clear of the gutter
        }
    }

    void unifiedShowsRemovedThenAddedLines()
    {
        QSettings().remove(QLatin1String(DiffView::kUnifiedSettingsKey));
        DiffView view;
        view.resize(900, 400);
        view.show();
        QVERIFY(!view.isUnified()); // side by side by default
        // Two changed lines replaced by two, one line added later: unified lists removed lines first.
        const QString oldText = QStringLiteral("a\nb = 1\nc = 1\nd\ne\n");
        const QString newText = QStringLiteral("a\nb = 2\nc = 2\nd\nnew\ne\n");
        view.showDiff(ak::TextDiff::compute(oldText, newText), QStringLiteral("old"), QStringLiteral("new"));
        QVERIFY(view.unifiedLines().isEmpty());
        view.unifiedAction()->trigger();
        QVERIFY(view.isUnified());
        QVERIFY(QSettings().value(QLatin1String(DiffView::kUnifiedSettingsKey)).toBool());
        QVERIFY(!view.editor(0)->isVisible());
        using K = ak::DiffLineKind;
        const QVector<ak::DiffLine> &lines = view.unifiedLines();
        QStringList texts;
        QVector<K> kinds;
        for (const ak::DiffLine &l : lines) {
            texts << l.text;
            kinds << l.kind;
        }
        QCOMPARE(texts, (QStringList { "a", "b = 1", "c = 1", "b = 2", "c = 2", "d", "new", "e" }));
        QCOMPARE(kinds,
            (QVector<K> {
                K::Equal, K::Removed, K::Removed, K::Added, K::Added, K::Equal, K::Added, K::Equal }));
        QCOMPARE(view.editor(1)->toPlainText(), texts.join(QLatin1Char('\n')));
        QCOMPARE(view.firstChangedRow(), 1);
        // Two gutter columns: old and new numbers; a removed line has no new one and vice versa.
        QStringList gutter;
        for (int i = 0; i < lines.size(); ++i)
            gutter << view.editor(1)->gutterText(i);
        QCOMPARE(gutter, (QStringList { "1 1", "2 ", "3 ", " 2", " 3", "4 4", " 5", "5 6" }));
        // -/+ backgrounds on the removed and added lines only; "64 -> 128"-style highlights kept.
        QTextBlock b = view.editor(1)->document()->firstBlock();
        for (const ak::DiffLine &l : lines) {
            QCOMPARE(b.blockFormat().hasProperty(QTextFormat::BackgroundBrush), l.kind != K::Equal);
            b = b.next();
        }
        QVERIFY(!view.editor(1)->extraSelections().isEmpty());
        // The choice is remembered for the next view; switching back restores both sides.
        {
            DiffView next;
            QVERIFY(next.isUnified());
        }
        view.setUnified(false);
        QVERIFY(view.editor(0)->isVisible());
        QCOMPARE(view.editor(0)->document()->blockCount(), view.editor(1)->document()->blockCount());
        QVERIFY(view.unifiedLines().isEmpty());
        QSettings().remove(QLatin1String(DiffView::kUnifiedSettingsKey));
    }

    void unchangedStretchesFoldAndExpandOnClick()
    {
        DiffView view;
        view.resize(900, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.isFolding()); // on by default
        QStringList oldLines = ak::TextDiff::splitLines(numbered(300, 0, {}));
        QStringList newLines = oldLines;
        newLines[149] = QStringLiteral("changed = 150");
        newLines[249] = QStringLiteral("changed = 250");
        const auto diff = ak::TextDiff::compute(oldLines.join('\n') + '\n', newLines.join('\n') + '\n');
        view.showDiff(diff, QStringLiteral("a"), QStringLiteral("b"));
        auto texts = [&view] {
            QStringList t;
            for (const ak::DiffRow &row : view.displayedRows())
                t << row.side[1].text;
            return t;
        };
        // 3 lines of context around each change, the rest one row per stretch.
        QCOMPARE(texts(),
            (QStringList { "⋯ 146 unchanged lines", "x147 = 147", "x148 = 148", "x149 = 149", "changed = 150",
                "x151 = 151", "x152 = 152", "x153 = 153", "⋯ 93 unchanged lines", "x247 = 247", "x248 = 248",
                "x249 = 249", "changed = 250", "x251 = 251", "x252 = 252", "x253 = 253",
                "⋯ 47 unchanged lines" }));
        QCOMPARE(view.editor(0)->gutterText(0), QString()); // a separator has no number
        QCOMPARE(view.editor(0)->gutterText(1), QStringLiteral("147"));
        QCOMPARE(view.editor(1)->gutterText(9), QStringLiteral("247"));
        // A click on the middle separator shows its 93 lines, numbered; the others stay folded.
        ak::DiffEditor *right = view.editor(1);
        right->verticalScrollBar()->setValue(0);
        const QTextBlock sep = right->document()->findBlockByNumber(8);
        const QPoint at = right->cursorRect(QTextCursor(sep)).center();
        QTest::mouseClick(right->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(view.displayedRows().size(), 17 - 1 + 93);
        QCOMPARE(view.displayedRows().at(8).side[1].text, QStringLiteral("x154 = 154"));
        QCOMPARE(view.editor(0)->gutterText(8), QStringLiteral("154"));
        QCOMPARE(texts().last(), QStringLiteral("⋯ 47 unchanged lines"));
        // A click on an ordinary line changes nothing.
        view.expandAt(1);
        QCOMPARE(view.displayedRows().size(), 109);
        // Unified folds the same way; its separator expands too.
        view.setUnified(true);
        QCOMPARE(view.unifiedLines().first().text, QStringLiteral("⋯ 146 unchanged lines"));
        QCOMPARE(view.unifiedLines().first().kind, ak::DiffLineKind::Padding);
        view.expandAt(0);
        QCOMPARE(view.unifiedLines().first().text, QStringLiteral("x1 = 1"));
        view.setUnified(false);
        // Off: the whole file, remembered.
        ak::test::named<QAction>(&view, "FoldUnchangedAction")->trigger();
        QVERIFY(!QSettings().value(QLatin1String(DiffView::kFoldSettingsKey), true).toBool());
        QCOMPARE(view.displayedRows().size(), 300);
        // An identical text is not folded (nothing would be left to read).
        view.setFolding(true);
        view.showDiff(ak::TextDiff::compute(oldLines.join('\n'), oldLines.join('\n')), QStringLiteral("a"),
            QStringLiteral("a"));
        QCOMPARE(view.displayedRows().size(), 300);
    }

    void backgroundComputationLatestWins()
    {
        DiffView view;
        QSignalSpy shown(&view, &DiffView::diffShown);
        view.showTexts(
            QStringLiteral("a\n"), QStringLiteral("b\n"), QStringLiteral("o"), QStringLiteral("first"));
        view.showTexts(
            QStringLiteral("a\n"), QStringLiteral("a\nc\n"), QStringLiteral("o"), QStringLiteral("second"));
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 5000);
        QTest::qWait(100); // a stale first result must not arrive afterwards
        QCOMPARE(shown.count(), 1);
        QCOMPARE(view.editor(1)->toPlainText(), QStringLiteral("a\nc"));
        // A message supersedes a computation still running.
        view.showTexts(
            QStringLiteral("x\n"), QStringLiteral("y\n"), QStringLiteral("o"), QStringLiteral("n"));
        view.showMessage(QStringLiteral("Nothing"), QString());
        QTest::qWait(200);
        QVERIFY(!view.isShowingDiff());
    }
};

AK_TEST_CLASS(DiffViewTest)
#include "tst_diffview.moc"
