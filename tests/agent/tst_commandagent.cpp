#include "agents/commandagent.h"
#include "testregistry.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>

#include <thread>

using namespace ak;

namespace {

const QString kKernel = QStringLiteral(
    "KERNEL_TYPE = \"softmax\"\nBLOCK_SIZE = 256\n\ndef kernel_fn(x):\n    return x.softmax(-1)\n");

void writeFile(const QString &path, const QString &text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text.toUtf8());
}

} // namespace

// The "external agent" is a small POSIX shell script run through the real template machinery.
class CommandAgentTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_kernelDir;

    QString script(const QString &name, const QString &body)
    {
        const QString path = m_dir.filePath(name + QStringLiteral(".sh"));
        writeFile(path, QStringLiteral("set -e\n") + body);
        return path;
    }

    AgentContext context() const
    {
        AgentContext c;
        c.kernelName = QStringLiteral("01-softmax");
        c.kernelDir = m_kernelDir;
        c.opType = QStringLiteral("softmax");
        c.kernelPy = kKernel;
        c.systemPrompt = QStringLiteral("SYSTEM-PROMPT-MARKER");
        c.prompt = QStringLiteral("CONTEXT-MARKER");
        return c;
    }

    static QString tmpl(const QString &script)
    {
        return QStringLiteral("/bin/sh '%1' {prompt} {dir}").arg(script);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_kernelDir = m_dir.filePath(QStringLiteral("kernels/01-softmax"));
        QVERIFY(QDir().mkpath(m_kernelDir));
        writeFile(m_kernelDir + QStringLiteral("/kernel.py"), kKernel);
        writeFile(m_kernelDir + QStringLiteral("/reference.py"), QStringLiteral("# reference\n"));
    }

    void goodEdit()
    {
        const QString s = script(QStringLiteral("good"),
            QStringLiteral("grep -q SYSTEM-PROMPT-MARKER \"$1\"\n"
                           "grep -q CONTEXT-MARKER \"$1\"\n"
                           "test \"$(pwd)\" = \"$2\"\n" // runs inside the scratch copy
                           "test -f \"$2/reference.py\"\n" // which has the kernel folder's files
                           "test \"$AUTOKERNEL_KERNEL_FILE\" = \"$2/kernel.py\"\n"
                           "sed -i 's/BLOCK_SIZE = 256/BLOCK_SIZE = 512/' kernel.py\n"
                           "echo 'doubled BLOCK_SIZE' > DESCRIPTION\n"
                           "echo \"$2\"\n"));
        CommandAgent agent(tmpl(s), 20000);
        const AgentResult r = agent.propose(context());
        QVERIFY2(r.ok(), qPrintable(r.error().reason + QStringLiteral(" | ") + r.error().rawReply));
        QCOMPARE(
            r.proposal().kernelPy, QString(kKernel).replace(QStringLiteral("256"), QStringLiteral("512")));
        QCOMPARE(r.proposal().description, QStringLiteral("doubled BLOCK_SIZE"));
        QCOMPARE(r.proposal().agentName, QStringLiteral("command"));
        QVERIFY(r.usage().seconds > 0);
        const QString scratch = r.proposal().rawReply.trimmed();
        QVERIFY(!scratch.isEmpty());
        QVERIFY2(!QDir(scratch).exists(), "the scratch copy is removed");
        QFile original(m_kernelDir + QStringLiteral("/kernel.py"));
        QVERIFY(original.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(original.readAll()), kKernel); // the run's folder is never touched
    }

    void descriptionFromStdout()
    {
        const QString s = script(QStringLiteral("stdout"),
            QStringLiteral("sed -i 's/BLOCK_SIZE = 256/BLOCK_SIZE = 128/' \"$2/kernel.py\"\n"
                           "printf '\\n  halve the block  \\nmore detail\\n'\n"));
        const AgentResult r = CommandAgent(tmpl(s), 20000).propose(context());
        QVERIFY(r.ok());
        QCOMPARE(r.proposal().description, QStringLiteral("halve the block"));
    }

    void failures_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("reasonHas");
        QTest::newRow("no-change") << QStringLiteral("echo looked at it\n") << int(AgentError::Kind::NoChange)
                                   << QStringLiteral("unchanged");
        QTest::newRow("exit-code") << QStringLiteral("echo boom >&2\nexit 3\n")
                                   << int(AgentError::Kind::Command) << QStringLiteral("code 3: boom");
        QTest::newRow("deleted") << QStringLiteral("rm \"$2/kernel.py\"\n") << int(AgentError::Kind::BadReply)
                                 << QStringLiteral("removed kernel.py");
    }
    void failures()
    {
        QFETCH(QString, body);
        QFETCH(int, kind);
        QFETCH(QString, reasonHas);
        const AgentResult r
            = CommandAgent(tmpl(script(QStringLiteral("fail"), body)), 20000).propose(context());
        QVERIFY(!r.ok());
        QCOMPARE(int(r.error().kind), kind);
        QVERIFY2(r.error().reason.contains(reasonHas), qPrintable(r.error().reason));
    }

    void missingProgram()
    {
        const AgentResult r
            = CommandAgent(QStringLiteral("/nonexistent/agent-tool --prompt-file {prompt}"), 5000)
                  .propose(context());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().kind, AgentError::Kind::Command);
        QVERIFY(!r.error().retryable);
        QVERIFY(r.error().reason.contains(QStringLiteral("/nonexistent/agent-tool")));
    }

    void timeoutKillsTheWholeProcessGroup()
    {
        const QString mark = m_dir.filePath(QStringLiteral("grandchild-survived"));
        const QString s
            = script(QStringLiteral("slow"), QStringLiteral("(sleep 2; touch \"$1\") &\nsleep 30\n"));
        CommandAgent agent(QStringLiteral("/bin/sh '%1' '%2'").arg(s, mark), 700);
        QElapsedTimer t;
        t.start();
        const AgentResult r = agent.propose(context());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().kind, AgentError::Kind::Timeout);
        QVERIFY2(t.elapsed() < 4000, qPrintable(QString::number(t.elapsed())));
        QTest::qWait(2500);
        QVERIFY2(!QFile::exists(mark), "a process the command started outlived the kill");
    }

    void stopFromAnotherThread()
    {
        CommandAgent agent(tmpl(script(QStringLiteral("forever"), QStringLiteral("sleep 30\n"))), 60000);
        std::thread stopper([&agent] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            agent.requestStop();
        });
        QElapsedTimer t;
        t.start();
        const AgentResult r = agent.propose(context());
        stopper.join();
        QCOMPARE(r.error().kind, AgentError::Kind::Cancelled);
        QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed())));
    }

    void templateExpansion()
    {
        QString error;
        const QHash<QString, QString> values { { QStringLiteral("prompt"),
                                                   QStringLiteral("/tmp/p q/prompt.md") },
            { QStringLiteral("dir"), QStringLiteral("/w") } };
        QCOMPARE(CommandAgent::expand(
                     QStringLiteral(
                         "tool --msg \"a \\\"b\\\"\" 'c d' e\\ f --prompt-file {prompt} --workdir={dir}"),
                     values, &error),
            QStringList({ QStringLiteral("tool"), QStringLiteral("--msg"), QStringLiteral("a \"b\""),
                QStringLiteral("c d"), QStringLiteral("e f"), QStringLiteral("--prompt-file"),
                QStringLiteral("/tmp/p q/prompt.md"), QStringLiteral("--workdir=/w") }));
        QCOMPARE(CommandAgent::expand(QStringLiteral("sh -c 'don\"t {dir}'"), values, &error),
            QStringList({ QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("don\"t /w") }));
        QVERIFY(CommandAgent::expand(QStringLiteral("tool 'unclosed"), values, &error).isEmpty());
        QVERIFY(error.contains(QStringLiteral("unclosed")));
        QVERIFY(CommandAgent::expand(QStringLiteral("   "), values, &error).isEmpty());
        const AgentResult r = CommandAgent(QString(), 1000).propose(context());
        QCOMPARE(r.error().kind, AgentError::Kind::Config);
    }
};

AK_TEST_CLASS(CommandAgentTest)
#include "tst_commandagent.moc"
