#include "llm/replyparser.h"
#include "testregistry.h"

using namespace ak;

namespace {

const QString kKernel = QStringLiteral("import torch\n"
                                       "KERNEL_TYPE = \"gelu\"\n"
                                       "\n"
                                       "def kernel_fn(x):\n"
                                       "    return torch.nn.functional.gelu(x)\n");

QString fenced(const QString &tag, const QString &code = kKernel)
{
    return QStringLiteral("```") + tag + QLatin1Char('\n') + code + QStringLiteral("```\n");
}

} // namespace

class ReplyParserTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void canonicalReply()
    {
        const ParsedReply r = ReplyParser::parse(
            QStringLiteral("DESCRIPTION: use the tanh approximation\n") + fenced(QStringLiteral("python")));
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.kernelPy, kKernel);
        QCOMPARE(r.description, QStringLiteral("use the tanh approximation"));
    }

    void proseAroundAndOtherBlocks()
    {
        const QString reply
            = QStringLiteral("The last run was memory bound at 61% of roof, so I will widen the "
                             "loads.\n\nFor reference, the old launch was:\n```text\ngrid=(4096,)\n```\n")
            + fenced(QStringLiteral("python"))
            + QStringLiteral("\n**Description:** vectorise loads to 16 bytes\n\nLet me know!\n");
        const ParsedReply r = ReplyParser::parse(reply);
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.kernelPy, kKernel);
        QCOMPARE(r.description, QStringLiteral("vectorise loads to 16 bytes"));
    }

    void crlfAndMissingTag()
    {
        QString reply = QStringLiteral("Description: fuse the bias add\n") + fenced(QString());
        reply.replace(QLatin1String("\n"), QLatin1String("\r\n"));
        const ParsedReply r = ReplyParser::parse(reply);
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.kernelPy, kKernel); // LF only
        QCOMPARE(r.description, QStringLiteral("fuse the bias add"));
    }

    void tagVariantsLongFenceAndIndent()
    {
        for (const QString &tag : { QStringLiteral("py"), QStringLiteral("Python"), QStringLiteral("python3"),
                 QStringLiteral("python title=kernel.py") }) {
            const ParsedReply r = ReplyParser::parse(QStringLiteral("DESCRIPTION: x\n") + fenced(tag));
            QVERIFY2(r.ok, qPrintable(tag + QStringLiteral(": ") + r.error));
        }
        // A four-backtick fence may hold a line of three backticks (e.g. in a docstring).
        const QString inner = kKernel + QStringLiteral("DOC = '''\n```\n'''\n");
        const ParsedReply four = ReplyParser::parse(
            QStringLiteral("DESCRIPTION: d\n````python\n") + inner + QStringLiteral("````\n"));
        QVERIFY2(four.ok, qPrintable(four.error));
        QCOMPARE(four.kernelPy, inner);
        // A block indented under a list item loses that indentation.
        QString indented;
        for (const QString &line : kKernel.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            indented += QStringLiteral("   ") + line + QLatin1Char('\n');
        const ParsedReply listed = ReplyParser::parse(
            QStringLiteral("1. DESCRIPTION: d\n   ```python\n") + indented + QStringLiteral("   ```\n"));
        QVERIFY2(listed.ok, qPrintable(listed.error));
        QVERIFY(listed.kernelPy.startsWith(QLatin1String("import torch\nKERNEL_TYPE")));
    }

    void rejections_data()
    {
        QTest::addColumn<QString>("reply");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("empty reply") << QString() << "no ```python block";
        QTest::newRow("prose only") << QStringLiteral("DESCRIPTION: nothing\nI cannot improve this.")
                                    << "no ```python";
        QTest::newRow("two blocks") << QStringLiteral("DESCRIPTION: a\n") + fenced(QStringLiteral("python"))
                + fenced(QStringLiteral("python"))
                                    << "2 python blocks";
        QTest::newRow("tagged + untagged kernel")
            << QStringLiteral("DESCRIPTION: a\n") + fenced(QStringLiteral("py")) + fenced(QString())
            << "2 python blocks";
        QTest::newRow("fragment") << QStringLiteral("DESCRIPTION: a\n")
                + fenced(QStringLiteral("python"), QStringLiteral("BLOCK = 128\n"))
                                  << "does not define kernel_fn";
        QTest::newRow("truncated") << QStringLiteral("DESCRIPTION: a\n```python\n") + kKernel
                                   << "never closed";
        QTest::newRow("no description") << fenced(QStringLiteral("python")) << "no DESCRIPTION";
        QTest::newRow("empty description")
            << QStringLiteral("DESCRIPTION:   \n") + fenced(QStringLiteral("python"))
            << "DESCRIPTION: line is empty";
        QTest::newRow("description only inside code")
            << fenced(QStringLiteral("python"), QStringLiteral("# DESCRIPTION: hidden\n") + kKernel)
            << "no DESCRIPTION";
    }

    void rejections()
    {
        QFETCH(QString, reply);
        QFETCH(QString, mentions);
        const ParsedReply r = ReplyParser::parse(reply);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains(mentions), qPrintable(r.error));
        QVERIFY(r.kernelPy.isEmpty());
    }

    void untaggedNonKernelBlockIsIgnored()
    {
        const ParsedReply r
            = ReplyParser::parse(QStringLiteral("DESCRIPTION: a\n```\n$ python bench.py\n```\n")
                + fenced(QStringLiteral("python")));
        QVERIFY2(r.ok, qPrintable(r.error));
    }

    void thinkBlocksAreNotTheAnswer()
    {
        // A reasoning model without a reasoning parser: draft code inside <think> would make two python
        // blocks (rejected); it is taken out and kept as the reasoning.
        const QString draft = QStringLiteral("<think>\nFirst try:\n")
            + fenced(QStringLiteral("python"), QStringLiteral("def kernel_fn(x):\n    return x\n"))
            + QStringLiteral("No, tile it.\n</think>\n");
        const ParsedReply r = ReplyParser::parse(
            draft + QStringLiteral("DESCRIPTION: tiled\n") + fenced(QStringLiteral("python")));
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.description, QStringLiteral("tiled"));
        QCOMPARE(r.kernelPy, kKernel); // the answer's block, not the draft
        QVERIFY(r.reasoning.contains(QStringLiteral("No, tile it.")));

        const ParsedReply cut = ReplyParser::parse(QStringLiteral("<think>\nLet me think about the tiling"));
        QVERIFY(!cut.ok);
        QVERIFY2(cut.error.contains(QStringLiteral("inside <think>")), qPrintable(cut.error));
    }

    void longDescriptionIsElided()
    {
        const ParsedReply r = ReplyParser::parse(QStringLiteral("DESCRIPTION: ")
            + QString(500, QLatin1Char('w')) + QLatin1Char('\n') + fenced(QStringLiteral("python")));
        QVERIFY(r.ok);
        QCOMPARE(r.description.size(), 200);
    }
};

AK_TEST_CLASS(ReplyParserTest)
#include "tst_replyparser.moc"
