#include "agents/agentconfig.h"
#include "llm/llmagent.h"
#include "llm/llmprobe.h"
#include "loopbackllmserver.h"
#include "testregistry.h"

#include <QTest>

using namespace ak;
using ak::test::LoopbackLlmServer;
using ak::test::ScriptedReply;

namespace {

const QString kKey = QStringLiteral("sk-probe-secret-0123456789");

ScriptedReply rawJson(int status, const QByteArray &body)
{
    ScriptedReply r;
    r.kind = ScriptedReply::Kind::Raw;
    r.status = status;
    r.raw = body;
    return r;
}

} // namespace

// autokernel-cli llm-check: what a run would meet, found before it starts.
class LlmProbeTest : public QObject
{
    Q_OBJECT

    static LlmRequest request(
        const LoopbackLlmServer &server, const QString &model = QStringLiteral("qwen-coder"))
    {
        AgentConfig c;
        c.kind = AgentConfig::Kind::Llm;
        c.llmProtocol = QStringLiteral("openai");
        c.baseUrl = server.baseUrl();
        c.model = model;
        c.stream = false;
        LlmAgent agent(c, kKey);
        return agent.requestDefaults();
    }

private Q_SLOTS:
    void vllmWithASmallContext()
    {
        LoopbackLlmServer server;
        QVERIFY(server.start());
        // vLLM's /v1/models names max_model_len; then the small chat request succeeds.
        server.setDiscoveryReply("/v1/models",
            rawJson(200,
                R"({"object":"list","data":[{"id":"qwen-coder","object":"model","max_model_len":8192}]})"));
        server.enqueue(ScriptedReply::reply(QStringLiteral("OK")));
        const LlmCheck c = LlmProbe::check(request(server));
        QVERIFY2(c.ok, qPrintable(c.verdict));
        QVERIFY2(c.verdict.startsWith(QStringLiteral("ok: qwen-coder answered")), qPrintable(c.verdict));
        QCOMPARE(c.contextTokens, 8192);
        QVERIFY(c.findings.join(QLatin1Char('\n')).contains(QStringLiteral("lists 1 model(s): qwen-coder")));
        // What llm-check prints about the limits: the context with its source; vLLM does not say the
        // output limit and the model is not in the table, so a run asks for the configured max_tokens.
        QCOMPARE(c.outputTokens, 0);
        QCOMPARE(c.maxTokens, 16384);
        const QStringList limits = c.limitLines();
        QCOMPARE(limits.size(), 2);
        QCOMPARE(limits[0], QStringLiteral("context: 8192 tokens (the server's max_model_len)"));
        QVERIFY2(limits[1].startsWith(QStringLiteral("output limit: not reported"))
                && limits[1].endsWith(QStringLiteral("a run asks for max_tokens 16384")),
            qPrintable(limits[1]));
        QCOMPARE(c.warnings.size(), 1); // 8192 < ~13k prompt + 16384
        QVERIFY2(c.warnings.first().contains(QStringLiteral("smaller than a run's prompt")),
            qPrintable(c.warnings.first()));
        const auto discovery = server.discoveryRequests();
        QCOMPARE(discovery.size(), 1); // the context is known: no /props
        QCOMPARE(discovery[0].path, QByteArray("/v1/models"));
        QCOMPARE(discovery[0].headers.value("authorization"), "Bearer " + kKey.toUtf8());
        QCOMPARE(server.requests().size(), 1);
        QCOMPARE(server.requests()[0].path, QByteArray("/v1/chat/completions"));
    }

    void llamaCppContextAndAMissingModel()
    {
        LoopbackLlmServer server;
        QVERIFY(server.start());
        server.setDiscoveryReply(
            "/v1/models", rawJson(200, R"({"object":"list","data":[{"id":"other.gguf","object":"model"}]})"));
        server.setDiscoveryReply(
            "/props", rawJson(200, R"({"default_generation_settings":{"n_ctx":65536}})"));
        server.enqueue(ScriptedReply::error(404, QStringLiteral("model not found")));
        const LlmCheck c = LlmProbe::check(request(server));
        QVERIFY(!c.ok);
        QCOMPARE(c.contextTokens, 65536);
        QCOMPARE(server.discoveryRequests()[1].path, QByteArray("/props"));
        QVERIFY(
            c.warnings.join(QLatin1Char('\n')).contains(QStringLiteral("\"qwen-coder\" is not among them")));
        QVERIFY2(c.verdict.contains(QStringLiteral("check --model and --base-url")), qPrintable(c.verdict));
    }

    // A hosted model the server says nothing about: context and output limit from the shipped table,
    // said as such, and the output limit caps what a run asks for (8192 < the default 16384).
    void outputLimitFromTheTable()
    {
        LoopbackLlmServer server;
        QVERIFY(server.start());
        server.enqueue(ScriptedReply::reply(QStringLiteral("OK")));
        const LlmCheck c = LlmProbe::check(request(server, QStringLiteral("claude-3-5-haiku-20241022")));
        QVERIFY2(c.ok, qPrintable(c.verdict));
        QCOMPARE(c.contextTokens, 200000);
        QCOMPARE(c.outputTokens, 8192);
        QCOMPARE(c.outputSource, QStringLiteral("the table of hosted models"));
        QCOMPARE(c.maxTokens, 8192);
        QCOMPARE(c.limitLines(),
            QStringList({ QStringLiteral("context: 200000 tokens (the table of hosted models)"),
                QStringLiteral("output limit: 8192 tokens (the table of hosted models); a run asks for "
                               "max_tokens 8192") }));
    }

    void refusedKeyIsNamedAndRedacted()
    {
        LoopbackLlmServer server;
        QVERIFY(server.start());
        server.setDiscoveryReply("/v1/models", rawJson(401, R"({"error":{"message":"bad key"}})"));
        server.enqueue(ScriptedReply::error(401, QStringLiteral("Incorrect API key provided: ") + kKey));
        const LlmCheck c = LlmProbe::check(request(server));
        QVERIFY(!c.ok);
        QCOMPARE(c.contextTokens, 0);
        QVERIFY2(c.verdict.contains(QStringLiteral("refused the API key")), qPrintable(c.verdict));
        QVERIFY2(!c.verdict.contains(kKey), qPrintable(c.verdict));
    }
};

AK_TEST_CLASS(LlmProbeTest)
#include "tst_llmprobe.moc"
