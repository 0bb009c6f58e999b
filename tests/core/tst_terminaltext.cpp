// Text from a kernel or an LLM is data (#39): escape codes and bidi controls are made visible, not
// passed to a terminal; ordinary text, newlines, tabs and non-Latin letters stay as they are.
#include "terminaltext.h"
#include "testregistry.h"

#include <QTest>

using namespace ak;

class TerminalTextTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void keepsOrdinaryText()
    {
        const QString plain = QStringLiteral("max error 0.5 at [3, 7]\n\tüñí 测试 → ok");
        QCOMPARE(TerminalText::clean(plain), plain);
    }

    void escapesControls()
    {
        const QString evil = QStringLiteral("ok\x1b[2J\x1b]0;pwned\x07 done\r");
        const QString clean = TerminalText::clean(evil);
        QVERIFY(!clean.contains(QChar(0x1b)));
        QVERIFY(!clean.contains(QChar(0x07)));
        QVERIFY(!clean.contains(QChar('\r')));
        QCOMPARE(clean, QStringLiteral("ok\\x1b[2J\\x1b]0;pwned\\x07 done\\x0d"));
    }

    void escapesBidiAndC1()
    {
        QString evil = QStringLiteral("correct ");
        evil += QChar(0x202e);
        evil += QStringLiteral("tcerrocni");
        evil += QChar(0x2066);
        evil += QChar(0x9b); // C1 CSI
        const QString clean = TerminalText::clean(evil);
        QCOMPARE(clean, QStringLiteral("correct \\u202etcerrocni\\u2066\\x9b"));
        for (const QChar c : clean)
            QVERIFY(!TerminalText::isUnsafe(c.unicode()));
    }
};

AK_TEST_CLASS(TerminalTextTest)
#include "tst_terminaltext.moc"
