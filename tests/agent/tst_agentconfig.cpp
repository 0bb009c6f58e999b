#include "agentconfig.h"
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
    }
};

AK_TEST_CLASS(AgentConfigTest)
#include "tst_agentconfig.moc"
