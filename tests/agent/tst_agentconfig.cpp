#include "agents/agentconfig.h"
#include "runconfig.h"
#include "testregistry.h"

using namespace ak;

class AgentConfigTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void kindsRoundTrip()
    {
        for (const QString &name : AgentConfig::kindNames()) {
            AgentConfig::Kind k = AgentConfig::Kind::Tune;
            QVERIFY(AgentConfig::parseKind(name, &k));
            QCOMPARE(AgentConfig::kindName(k), name);
        }
        QVERIFY(!AgentConfig::parseKind(QStringLiteral("gpt"), nullptr));
        QCOMPARE(AgentConfig::kindNames().join(QLatin1Char(' ')), QStringLiteral("tune llm command replay"));
        AgentConfig::Kind k = AgentConfig::Kind::Tune;
        QVERIFY(AgentConfig::parseKind(QStringLiteral(" LLM "), &k)); // --agent is forgiving
        QCOMPARE(k, AgentConfig::Kind::Llm);
    }

    // The run's own agent comes from its RunConfig: none leaves the caller's agent, a section
    // replaces it, a malformed one is an error naming the field and leaves it too.
    void agentOfTheRun()
    {
        RunConfig run;
        AgentConfig a;
        a.kind = AgentConfig::Kind::Command;
        QString why;
        QVERIFY(AgentConfig::fromRun(run, &a, &why));
        QCOMPARE(a.kind, AgentConfig::Kind::Command);

        QVERIFY(RunConfig::parse(R"({"agent": {"kind": "llm", "model": "m", "max_tokens": 99}})", &run));
        QVERIFY2(AgentConfig::fromRun(run, &a, &why), qPrintable(why));
        QCOMPARE(a.kind, AgentConfig::Kind::Llm);
        QCOMPARE(a.model, QStringLiteral("m"));
        QCOMPARE(a.maxTokens, 99);

        QVERIFY(RunConfig::parse(R"({"agent": {"kind": "llm", "max_tokens": "many"}})", &run));
        a = AgentConfig();
        QVERIFY(!AgentConfig::fromRun(run, &a, &why));
        QVERIFY2(why.contains(QLatin1String("max_tokens")), qPrintable(why));
        QCOMPARE(a.kind, AgentConfig::Kind::Tune);
    }
};

AK_TEST_CLASS(AgentConfigTest)
#include "tst_agentconfig.moc"
