// LlmLimits and the LLM agent sized for the model it talks to: the context found where each server
// says it (vLLM, llama.cpp, Ollama's /api/ps and /api/show) or in the table of hosted models; a prompt
// that fits is sent whole with max_tokens capped to the room left; one that does not gets the compact
// playbook (this op type's sections only) and the run's log says so; one that cannot fit even then is
// a configuration error naming the setting, sent to nobody.
#include "agents/promptbuilder.h"
#include "llm/llmagent.h"
#include "llm/llmlimits.h"
#include "loopbackllmserver.h"
#include "testregistry.h"

#include <nlohmann/json.hpp>

using namespace ak;
using ak::test::LoopbackLlmServer;
using ak::test::ScriptedReply;

namespace {

const QString kKernel = QStringLiteral(
    "KERNEL_TYPE = \"softmax\"\nBLOCK_SIZE = 256\n\ndef kernel_fn(x):\n    return x.softmax(-1)\n");

QString goodReply()
{
    return QStringLiteral("DESCRIPTION: BLOCK_SIZE 256 -> 512\n\n```python\n")
        + QString(kKernel).replace(QStringLiteral("256"), QStringLiteral("512")) + QStringLiteral("```\n");
}

LlmRequest requestFor(const LoopbackLlmServer &server, const QString &model)
{
    AgentConfig c;
    c.kind = AgentConfig::Kind::Llm;
    c.llmProtocol = QStringLiteral("openai");
    c.baseUrl = server.baseUrl();
    c.model = model;
    LlmAgent agent(c, QString());
    return agent.requestDefaults();
}

DeviceInfo gpu()
{
    DeviceInfo d;
    d.available = true;
    d.vendor = QStringLiteral("nvidia");
    d.name = QStringLiteral("NVIDIA H200");
    return d;
}

// The real playbook, filled, and its compact form for a softmax kernel on a GPU.
AgentContext playbookContext()
{
    KernelRecord k;
    k.opType = QStringLiteral("softmax");
    k.folder = QStringLiteral("kernels/01-softmax");
    AgentContext c;
    c.kernelName = QStringLiteral("01-softmax");
    c.opType = k.opType;
    c.kernelPy = kKernel;
    QString error;
    c.systemPrompt = PromptBuilder().systemPrompt(gpu(), k, MoveOnRules(), &error);
    c.compactSystemPrompt = PromptBuilder::compact(c.systemPrompt, k.opType, false);
    return c;
}

ScriptedReply json200(const QByteArray &body)
{
    ScriptedReply r = ScriptedReply::rawReply(200, body);
    r.contentType = "application/json";
    return r;
}

} // namespace

class LlmLimitsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void fitRules()
    {
        LlmLimits l;
        QCOMPARE(l.fit(16384, 13000, 5000).maxTokens, 16384); // nothing known: as configured
        l.contextTokens = 32768;
        LlmLimits::Fit f = l.fit(16384, 13000, 5000);
        QVERIFY(!f.compact && f.error.isEmpty());
        QCOMPARE(f.maxTokens, 16384);
        l.contextTokens = 20000; // the full prompt fits, with less room for the reply
        f = l.fit(16384, 13000, 5000);
        QVERIFY(!f.compact);
        QCOMPARE(f.maxTokens, 20000 - 13000 - LlmLimits::MarginTokens);
        l.contextTokens = 12000; // only the compact playbook fits
        f = l.fit(16384, 13000, 5000);
        QVERIFY(f.compact);
        QCOMPARE(f.maxTokens, 12000 - 5000 - LlmLimits::MarginTokens);
        l.contextTokens = 8000; // nothing fits: a configuration error naming what to change
        f = l.fit(16384, 13000, 5000);
        QCOMPARE(f.maxTokens, 0);
        QVERIFY2(f.error.contains(QStringLiteral("--max-model-len"))
                && f.error.contains(QStringLiteral("agent.context_tokens")),
            qPrintable(f.error));
        l.contextTokens = 200000; // the model's own output limit caps the request
        l.outputTokens = 8192;
        QCOMPARE(l.fit(16384, 13000, 5000).maxTokens, 8192);
    }

    void hostedModelsTable()
    {
        LlmLimits l = LlmLimits::fromTable(QStringLiteral("gpt-4o-2024-08-06"));
        QCOMPARE(l.contextTokens, 128000);
        QCOMPARE(l.outputTokens, 16384);
        l = LlmLimits::fromTable(QStringLiteral("gpt-4o-mini")); // the longest prefix wins
        QCOMPARE(l.contextTokens, 128000);
        l = LlmLimits::fromTable(QStringLiteral("anthropic/claude-3-5-haiku-latest"));
        QCOMPARE(l.outputTokens, 8192);
        QCOMPARE(LlmLimits::fromTable(QStringLiteral("my-local-model")).contextTokens, 0);
    }

    void ollamaSaysItsContext()
    {
        LoopbackLlmServer server;
        QVERIFY(server.start());
        server.setDiscoveryReply("/api/ps",
            json200(
                R"({"models":[{"name":"qwen2.5-coder:7b","model":"qwen2.5-coder:7b","context_length":32768}]})"));
        LlmLimits l = LlmLimits::discover(requestFor(server, QStringLiteral("qwen2.5-coder:7b")));
        QCOMPARE(l.contextTokens, 32768);
        QVERIFY(l.source.contains(QStringLiteral("Ollama")));

        LoopbackLlmServer show;
        QVERIFY(show.start());
        show.setDiscoveryReply(
            "/api/show", json200("{\"parameters\":\"stop <|im_end|>\\nnum_ctx 16384\\n\"}"));
        l = LlmLimits::discover(requestFor(show, QStringLiteral("qwen2.5-coder:7b")));
        QCOMPARE(l.contextTokens, 16384);
        QCOMPARE(show.discoveryRequests().last().method, QByteArray("POST"));
        QVERIFY(show.discoveryRequests().last().body.contains("qwen2.5-coder:7b"));

        // Ollama answers but does not say its context: a warning, and no number made up.
        LoopbackLlmServer silent;
        QVERIFY(silent.start());
        silent.setDiscoveryReply("/api/show", json200(R"({"model_info":{"qwen2.context_length":131072}})"));
        l = LlmLimits::discover(requestFor(silent, QStringLiteral("qwen2.5-coder:7b")));
        QCOMPARE(l.contextTokens, 0);
        QCOMPARE(l.warnings.size(), 1);
        QVERIFY2(l.warnings.first().contains(QStringLiteral("OLLAMA_CONTEXT_LENGTH"))
                && l.warnings.first().contains(QStringLiteral("131072")),
            qPrintable(l.warnings.first()));
    }

    void compactPlaybook()
    {
        const AgentContext c = playbookContext();
        QVERIFY(!c.systemPrompt.isEmpty());
        const QString &full = c.systemPrompt, &compact = c.compactSystemPrompt;
        for (const char *kept :
            { "## 0.", "## 1.", "### 1.2 Reply format", "## 2.", "## 3.", "### `softmax`", "## 10." })
            QVERIFY2(compact.contains(QLatin1String(kept)), kept);
        for (const char *dropped : { "## 4.", "## 5.", "## 6.", "## 7.", "### `matmul`", "## 9." })
            QVERIFY2(!compact.contains(QLatin1String(dropped)), dropped);
        QVERIFY2(compact.size() < full.size() / 2,
            qPrintable(QStringLiteral("%1 of %2").arg(compact.size()).arg(full.size())));
        // On the CPU: the CPU section instead of the GPU's first tier.
        const QString cpu = PromptBuilder::compact(full, QStringLiteral("softmax"), true);
        QVERIFY(cpu.contains(QLatin1String("## 9.")) && !cpu.contains(QLatin1String("## 3.")));
    }

    void agentSizesItsRequests()
    {
        LoopbackLlmServer server;
        QVERIFY(server.start());
        // vLLM with 12k tokens: the ~12k-token playbook does not fit, the compact one does.
        server.setDiscoveryReply("/v1/models",
            json200(
                R"({"object":"list","data":[{"id":"qwen-coder","object":"model","max_model_len":12000}]})"));
        server.enqueue(ScriptedReply::reply(goodReply()));
        server.enqueue(ScriptedReply::reply(goodReply()));
        AgentConfig config;
        config.kind = AgentConfig::Kind::Llm;
        config.llmProtocol = QStringLiteral("openai");
        config.baseUrl = server.baseUrl();
        config.model = QStringLiteral("qwen-coder");
        config.stream = false;
        LlmAgent agent(config, QString());
        const AgentContext c = playbookContext();
        const AgentResult first = agent.propose(c);
        QVERIFY2(first.ok(), first.ok() ? "" : qPrintable(first.error().reason));
        QVERIFY2(first.usage().note.contains(QStringLiteral("12000 tokens"))
                && first.usage().note.contains(QStringLiteral("compact")),
            qPrintable(first.usage().note));
        const auto body = nlohmann::json::parse(server.requests().first().body.toStdString());
        const int maxTokens = body.value("max_tokens", 0);
        QVERIFY2(maxTokens >= LlmLimits::MinOutputTokens && maxTokens < 12000,
            qPrintable(QString::number(maxTokens)));
        const QString system = QString::fromStdString(body["messages"][0]["content"].get<std::string>());
        QCOMPARE(system, c.compactSystemPrompt);
        // Discovered once; said once.
        const AgentResult second = agent.propose(c);
        QVERIFY(second.ok());
        QVERIFY(second.usage().note.isEmpty());
        QCOMPARE(server.discoveryRequests().size(), 1);

        // run.json's agent.context_tokens wins over the server, and too small a context is a
        // configuration error: nothing is sent.
        config.contextTokens = 3000;
        LlmAgent tooSmall(config, QString());
        const int sent = int(server.requests().size());
        const AgentResult refused = tooSmall.propose(c);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().kind, AgentError::Kind::Config);
        QVERIFY2(refused.error().reason.contains(QStringLiteral("agent.context_tokens")),
            qPrintable(refused.error().reason));
        QCOMPARE(int(server.requests().size()), sent);
    }
};

AK_TEST_CLASS(LlmLimitsTest)
#include "tst_llmlimits.moc"
