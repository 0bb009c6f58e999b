#include "testregistry.h"
#include "textdiff.h"

using ak::DiffLineKind;
using ak::DiffRange;
using ak::TextDiff;

namespace {

int rowCount(const ak::TextDiffResult &r)
{
    int n = 0;
    for (const auto &c : r.chunks)
        n += c.rows.size();
    return n;
}

// Lines of one side in row order, padding skipped: must reproduce the input text exactly.
QStringList sideLines(const ak::TextDiffResult &r, int s)
{
    QStringList out;
    for (const auto &c : r.chunks)
        for (const auto &row : c.rows)
            if (row.side[s].kind != DiffLineKind::Padding)
                out << row.side[s].text;
    return out;
}

} // namespace

class TextDiffTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void splitLinesFollowsGit()
    {
        QCOMPARE(TextDiff::splitLines(QString()), QStringList());
        QCOMPARE(TextDiff::splitLines(QStringLiteral("a\nb\n")),
            (QStringList { QStringLiteral("a"), QStringLiteral("b") }));
        QCOMPARE(TextDiff::splitLines(QStringLiteral("a\n\nb")).size(), 3);
    }

    void identicalTexts()
    {
        const QString t = QStringLiteral("x = 1\ny = 2\n");
        const auto r = TextDiff::compute(t, t);
        QVERIFY(r.error.isEmpty());
        QVERIFY(r.identical());
        QCOMPARE(rowCount(r), 2);
        const auto ctx = TextDiff::compute(t, t, 3);
        QVERIFY(ctx.chunks.isEmpty());
        QCOMPARE(ctx.skippedAfter, 2);
    }

    void paddingMakesSidesEqual_data()
    {
        QTest::addColumn<QString>("oldText");
        QTest::addColumn<QString>("newText");
        QTest::addColumn<int>("removed");
        QTest::addColumn<int>("added");
        QTest::newRow("insert at start") << "b\nc\n"
                                         << "a\nb\nc\n"
                                         << 0 << 1;
        QTest::newRow("insert at end") << "a\nb\n"
                                       << "a\nb\nc\nd\n"
                                       << 0 << 2;
        QTest::newRow("delete middle") << "a\nb\nc\nd\n"
                                       << "a\nd\n"
                                       << 2 << 0;
        QTest::newRow("replace 1 by 3") << "a\nBLOCK = 64\nz\n"
                                        << "a\nBLOCK = 128\nx\ny\nz\n"
                                        << 1 << 3;
        QTest::newRow("from empty") << ""
                                    << "a\nb\n"
                                    << 0 << 2;
        QTest::newRow("to empty") << "a\nb\n"
                                  << "" << 2 << 0;
        QTest::newRow("no final newline") << "a\nb"
                                          << "a\nc" << 1 << 1;
        QTest::newRow("two hunks") << "1\n2\n3\n4\n5\n6\n7\n8\n"
                                   << "1\nX\n3\n4\n5\n6\nY\nZ\n8\n"
                                   << 2 << 3;
    }

    void paddingMakesSidesEqual()
    {
        QFETCH(QString, oldText);
        QFETCH(QString, newText);
        QFETCH(int, removed);
        QFETCH(int, added);
        const auto r = TextDiff::compute(oldText, newText);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.removed, removed);
        QCOMPARE(r.added, added);
        // Both sides have one entry per row by construction; the content must be exactly each input.
        QCOMPARE(sideLines(r, 0), TextDiff::splitLines(oldText));
        QCOMPARE(sideLines(r, 1), TextDiff::splitLines(newText));
        const int oldN = int(TextDiff::splitLines(oldText).size());
        const int newN = int(TextDiff::splitLines(newText).size());
        int pad[2] = { 0, 0 };
        for (const auto &row : r.chunks.value(0).rows) {
            for (int s = 0; s < 2; ++s) {
                if (row.side[s].kind == DiffLineKind::Padding) {
                    ++pad[s];
                    QCOMPARE(row.side[s].lineNumber, 0);
                }
            }
            // A padding row never faces another padding row.
            QVERIFY(
                !(row.side[0].kind == DiffLineKind::Padding && row.side[1].kind == DiffLineKind::Padding));
        }
        QCOMPARE(oldN + pad[0], rowCount(r));
        QCOMPARE(newN + pad[1], rowCount(r));
    }

    void lineNumbersIncrease()
    {
        const auto r = TextDiff::compute(QStringLiteral("a\nb\nc\n"), QStringLiteral("a\nB\nc\nd\n"));
        const auto &rows = r.chunks.at(0).rows;
        QCOMPARE(rows.size(), 4);
        QCOMPARE(rows[1].side[0].kind, DiffLineKind::Removed);
        QCOMPARE(rows[1].side[1].kind, DiffLineKind::Added);
        QCOMPARE(rows[1].side[0].lineNumber, 2);
        QCOMPARE(rows[3].side[0].kind, DiffLineKind::Padding);
        QCOMPARE(rows[3].side[1].lineNumber, 4);
        QCOMPARE(rows[3].side[1].text, QStringLiteral("d"));
    }

    void contextChunks()
    {
        QStringList a;
        for (int i = 1; i <= 40; ++i)
            a << QString::number(i);
        QStringList b = a;
        b[4] = QStringLiteral("five");
        b[30] = QStringLiteral("thirty-one");
        const auto r = TextDiff::compute(a.join(QLatin1Char('\n')), b.join(QLatin1Char('\n')), 2);
        QCOMPARE(r.chunks.size(), 2);
        QCOMPARE(r.chunks[0].skippedBefore, 2); // lines 1-2 hidden, 3..7 shown
        QCOMPARE(r.chunks[0].rows.size(), 5);
        QCOMPARE(r.chunks[1].skippedBefore, 31 - 2 - 1 - 7); // 8..28 hidden
        QCOMPARE(r.chunks[1].rows.first().side[0].lineNumber, 29);
        QCOMPARE(r.skippedAfter, 40 - 33);
    }

    void refineMarksChangedToken()
    {
        const QString a = QStringLiteral("BLOCK_SIZE = 1024  # rows");
        const QString b = QStringLiteral("BLOCK_SIZE = 2048  # rows");
        const auto r = TextDiff::refineLine(a, b);
        QCOMPARE(r[0], (QVector<DiffRange> { { 13, 4 } }));
        QCOMPARE(r[1], (QVector<DiffRange> { { 13, 4 } }));
        QCOMPARE(a.mid(13, 4), QStringLiteral("1024"));
    }

    void refineInsertionOnOneSide()
    {
        const auto r = TextDiff::refineLine(QStringLiteral("f(x)"), QStringLiteral("f(x, y)"));
        QVERIFY(r[0].isEmpty());
        QCOMPARE(r[1], (QVector<DiffRange> { { 3, 3 } })); // ", y"
    }

    void refineCleanupAbsorbsTinyIslands()
    {
        // "a.b" -> "x.y": the "." alone must not split the highlight in two.
        const auto r = TextDiff::refineLine(QStringLiteral("v = a.b"), QStringLiteral("v = x.y"));
        QCOMPARE(r[0], (QVector<DiffRange> { { 4, 3 } }));
        QCOMPARE(r[1], (QVector<DiffRange> { { 4, 3 } }));
    }

    void refineLongLinesFallsBackToAffixes()
    {
        QString a(5000, QLatin1Char('a'));
        a.replace(QStringLiteral("aaaa"), QStringLiteral("a b "));
        QString b = a;
        b[2500] = QLatin1Char('Z');
        const auto r = TextDiff::refineLine(a, b);
        QCOMPARE(r[0].size(), 1);
        QCOMPARE(r[0][0].start, 2500);
        QCOMPARE(r[1][0].length, 1);
    }
};

AK_TEST_CLASS(TextDiffTest)
#include "tst_textdiff.moc"
