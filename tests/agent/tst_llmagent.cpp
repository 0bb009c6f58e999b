#include "llm/llmagent.h"
#include "llm/llmclient.h"
#include "llm/llmpricing.h"
#include "llm/llmprotocol.h"
#include "llm/ssedecoder.h"
#include "loopbackllmserver.h"
#include "testregistry.h"

#include <QElapsedTimer>
#include <QLocale>
#include <QTcpServer>

#include <nlohmann/json.hpp>

#include <thread>

using namespace ak;
using ak::test::LoopbackLlmServer;
using ak::test::ScriptedReply;

namespace {

const QString kCurrent = QStringLiteral(
    "KERNEL_TYPE = \"softmax\"\nBLOCK_SIZE = 256\n\ndef kernel_fn(x):\n    return x.softmax(-1)\n");
const QString kImproved = QStringLiteral(
    "KERNEL_TYPE = \"softmax\"\nBLOCK_SIZE = 512\n\ndef kernel_fn(x):\n    return x.softmax(-1)\n");
const QString kKey = QStringLiteral("sk-loopback-secret-0123456789");

QString goodReply()
{
    return QStringLiteral(
               "Here is my change.\n\nDESCRIPTION: BLOCK_SIZE 256 -> 512 for fewer programs\n\n```python\n")
        + kImproved + QStringLiteral("```\n\nThat should help.");
}

AgentContext context()
{
    AgentContext c;
    c.kernelName = QStringLiteral("01-softmax");
    c.opType = QStringLiteral("softmax");
    c.kernelPy = kCurrent;
    c.systemPrompt = QStringLiteral("You optimise GPU kernels.");
    return c;
}

nlohmann::json bodyOf(const ak::test::RecordedRequest &r)
{
    return nlohmann::json::parse(r.body.constData(), r.body.constData() + r.body.size(), nullptr, false);
}

} // namespace

class LlmAgentTest : public QObject
{
    Q_OBJECT

    std::unique_ptr<LoopbackLlmServer> m_server;

    std::unique_ptr<LlmAgent> agent(
        const QString &protocol, bool stream, int attempts = 3, const PriceTable &prices = PriceTable())
    {
        AgentConfig c;
        c.kind = AgentConfig::Kind::Llm;
        c.llmProtocol = protocol;
        c.baseUrl = m_server->baseUrl();
        c.model = QStringLiteral("test-model");
        c.stream = stream;
        c.maxAttempts = attempts;
        c.requestTimeoutSec = 10;
        c.idleTimeoutSec = 10;
        auto a = std::make_unique<LlmAgent>(c, kKey, prices);
        a->requestDefaults().initialBackoffMs = 10;
        a->requestDefaults().maxBackoffMs = 3000;
        return a;
    }

private Q_SLOTS:
    void init()
    {
        m_server = std::make_unique<LoopbackLlmServer>();
        QVERIFY(m_server->start());
    }
    void cleanup() { m_server.reset(); }

    void goodEdit_data()
    {
        QTest::addColumn<QString>("protocol");
        QTest::addColumn<bool>("stream");
        QTest::newRow("openai-stream") << QStringLiteral("openai") << true;
        QTest::newRow("openai-json") << QStringLiteral("openai") << false;
        QTest::newRow("anthropic-stream") << QStringLiteral("anthropic") << true;
        QTest::newRow("anthropic-json") << QStringLiteral("anthropic") << false;
    }
    void goodEdit()
    {
        QFETCH(QString, protocol);
        QFETCH(bool, stream);
        ScriptedReply r = ScriptedReply::reply(goodReply());
        r.chunkChars = 7; // many small events: the stream is reassembled across reads
        r.tokensIn = 1000;
        r.tokensOut = 200;
        m_server->enqueue(r);
        PriceTable prices;
        prices.set(QStringLiteral("test-model"), ModelPrice { 3.0, 15.0 });
        const AgentResult result = agent(protocol, stream, 3, prices)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved);
        QCOMPARE(result.proposal().description, QStringLiteral("BLOCK_SIZE 256 -> 512 for fewer programs"));
        QCOMPARE(result.proposal().agentName, QStringLiteral("llm:test-model"));
        QCOMPARE(result.usage().tokensIn, 1000);
        QCOMPARE(result.usage().tokensOut, 200);
        QCOMPARE(result.usage().cost, (1000 * 3.0 + 200 * 15.0) / 1e6);
        QCOMPARE(result.usage().attempts, 1);

        const auto requests = m_server->requests();
        QCOMPARE(requests.size(), 1);
        const auto &req = requests.first();
        const nlohmann::json body = bodyOf(req);
        QCOMPARE(req.method, QByteArray("POST"));
        QCOMPARE(body.value("model", std::string()), std::string("test-model"));
        QCOMPARE(body.value("stream", !stream), stream);
        if (protocol == QLatin1String("anthropic")) {
            QCOMPARE(req.path, QByteArray("/v1/messages"));
            QCOMPARE(req.headers.value("x-api-key"), kKey.toUtf8());
            QVERIFY(!req.headers.value("anthropic-version").isEmpty());
            QCOMPARE(body.value("system", std::string()), std::string("You optimise GPU kernels."));
            QVERIFY(QString::fromStdString(body["messages"][0]["content"].get<std::string>())
                        .contains(QStringLiteral("BLOCK_SIZE = 256")));
        } else {
            QCOMPARE(req.path, QByteArray("/v1/chat/completions"));
            QCOMPARE(req.headers.value("authorization"), QByteArray("Bearer ") + kKey.toUtf8());
            QCOMPARE(body["messages"][0]["role"].get<std::string>(), std::string("system"));
            QVERIFY(QString::fromStdString(body["messages"][1]["content"].get<std::string>())
                        .contains(QStringLiteral("BLOCK_SIZE = 256")));
        }
    }

    void badRepliesAreAgentErrors_data()
    {
        QTest::addColumn<QString>("protocol");
        QTest::addColumn<bool>("stream");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("reasonHas");
        const auto bad = int(AgentError::Kind::BadReply);
        const QString noFn = QStringLiteral(
            "DESCRIPTION: drop kernel_fn\n```python\nKERNEL_TYPE = \"softmax\"\nBLOCK_SIZE = 512\n```\n");
        for (const QString &p : { QStringLiteral("openai"), QStringLiteral("anthropic") }) {
            for (bool s : { true, false }) {
                const QByteArray tag = p.toLatin1() + (s ? "-stream" : "-json");
                QTest::newRow(QByteArray(tag + "-garbage").constData())
                    << p << s << bad << QStringLiteral("I am sorry, I cannot do that.")
                    << QStringLiteral("unusable reply");
                QTest::newRow(QByteArray(tag + "-empty").constData())
                    << p << s << bad << QString() << QStringLiteral("empty");
                QTest::newRow(QByteArray(tag + "-no-kernel_fn").constData())
                    << p << s << bad << noFn << QStringLiteral("unusable reply");
                QTest::newRow(QByteArray(tag + "-unchanged").constData())
                    << p << s << int(AgentError::Kind::NoChange)
                    << QStringLiteral("DESCRIPTION: nothing\n```python\n") + kCurrent
                        + QStringLiteral("```\n")
                    << QStringLiteral("unchanged");
            }
        }
    }
    void badRepliesAreAgentErrors()
    {
        QFETCH(QString, protocol);
        QFETCH(bool, stream);
        QFETCH(int, kind);
        QFETCH(QString, text);
        QFETCH(QString, reasonHas);
        m_server->enqueue(ScriptedReply::reply(text));
        const AgentResult result = agent(protocol, stream)->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(int(result.error().kind), kind);
        QVERIFY2(result.error().reason.contains(reasonHas), qPrintable(result.error().reason));
        QCOMPARE(result.error().rawReply, text); // kept for the experiment's record
        QCOMPARE(result.usage().tokensOut, 45); // a bad reply still cost tokens
        QCOMPARE(m_server->requests().size(), 1); // and is not retried by the agent
    }

    void malformedBodies_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QByteArray>("type");
        QTest::newRow("not-json") << QByteArray("<html>gateway</html>") << QByteArray("text/html");
        QTest::newRow("empty-body") << QByteArray() << QByteArray("application/json");
        QTest::newRow("wrong-shape") << QByteArray(R"({"result": "ok"})") << QByteArray("application/json");
        QTest::newRow("garbage-stream")
            << QByteArray("data: {not json\n\n") << QByteArray("text/event-stream");
    }
    void malformedBodies()
    {
        QFETCH(QByteArray, raw);
        QFETCH(QByteArray, type);
        ScriptedReply r;
        r.kind = ScriptedReply::Kind::Raw;
        r.raw = raw;
        r.contentType = type;
        m_server->enqueue(r);
        const AgentResult result = agent(QStringLiteral("openai"), false, 1)->propose(context());
        QVERIFY(!result.ok());
        QVERIFY(result.error().kind == AgentError::Kind::BadReply
            || result.error().kind == AgentError::Kind::Http
            || result.error().kind == AgentError::Kind::Network);
        QVERIFY(!result.error().reason.isEmpty());
    }

    void serverIgnoringStreamFlag()
    {
        // Some local servers answer a streaming request with one JSON body.
        const nlohmann::json j
            = { { "choices",
                    { { { "index", 0 },
                        { "message", { { "role", "assistant" }, { "content", goodReply().toStdString() } } },
                        { "finish_reason", "stop" } } } },
                  { "usage", { { "prompt_tokens", 11 }, { "completion_tokens", 22 } } } };
        ScriptedReply r;
        r.kind = ScriptedReply::Kind::Raw;
        r.raw = QByteArray::fromStdString(j.dump());
        m_server->enqueue(r);
        const AgentResult result = agent(QStringLiteral("openai"), true)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved);
        QCOMPARE(result.usage().tokensOut, 22);
    }

    // Anthropic reports a rejected request inside the 200 stream (an `error` event): the same request
    // fails alike every time, so it is a configuration error naming the setting, never retried.
    void errorInsideStream_data()
    {
        QTest::addColumn<QByteArray>("error");
        QTest::addColumn<QString>("hint");
        QTest::newRow("prompt too long") << QByteArray(
            "{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 215000 "
            "tokens > 200000 maximum\"}") << QStringLiteral("do not fit the model's context");
        QTest::newRow("max_tokens over the model's limit")
            << QByteArray("{\"type\":\"invalid_request_error\",\"message\":\"max_tokens: 100000 > 64000, "
                          "which is the maximum allowed number of output tokens\"}")
            << QStringLiteral("rejected the request's parameters");
    }
    void errorInsideStream()
    {
        QFETCH(QByteArray, error);
        QFETCH(QString, hint);
        m_server->enqueue(ScriptedReply::stream(
            "event: message_start\ndata: "
            "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9}}}\n\n"
            "event: error\ndata: {\"type\":\"error\",\"error\":"
            + error + "}\n\n"));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("anthropic"), true)->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY(!result.error().retryable); // not an overload: the same request would fail again
        QVERIFY2(result.error().reason.contains(hint), qPrintable(result.error().reason));
        QVERIFY2(result.error().reason.contains(QStringLiteral("invalid_request_error")),
            qPrintable(result.error().reason)); // the server's own words follow the hint
        QCOMPARE(m_server->requests().size(), 1);
    }

    // Anthropic's overload inside a 200 stream is transient: retried, and the retry's reply is used.
    void overloadInsideStreamIsRetried()
    {
        m_server->enqueue(ScriptedReply::stream(
            "event: message_start\ndata: "
            "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9}}}\n\n"
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
            "\"message\":\"Overloaded\"}}\n\n"));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("anthropic"), true, 3)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved);
        QCOMPARE(result.usage().attempts, 2);
        QCOMPARE(m_server->requests().size(), 2);
    }

    // Reasoning models: the thoughts arrive beside the answer (vLLM's reasoning_content, newer
    // servers' reasoning, Anthropic's thinking blocks). They are kept with the reply for review and
    // never parsed: a code block inside them is not the proposal.
    void reasoningIsKeptButNeverParsed_data()
    {
        QTest::addColumn<QString>("protocol");
        QTest::addColumn<QByteArray>("raw");
        const QString thought = QStringLiteral("Maybe BLOCK_SIZE = 4096?\n```python\nBLOCK_SIZE = 4096\n```");
        auto sse = [](const std::vector<nlohmann::json> &events, bool openai) {
            QByteArray out;
            for (const auto &e : events)
                out += (openai ? QByteArray()
                               : "event: " + QByteArray::fromStdString(e.value("type", "")) + "\n")
                    + "data: " + QByteArray::fromStdString(e.dump()) + "\n\n";
            if (openai)
                out += "data: [DONE]\n\n";
            return out;
        };
        const std::string t = thought.toStdString();
        const std::string reply = goodReply().toStdString();
        for (const char *field : { "reasoning_content", "reasoning" })
            QTest::newRow(field) << QStringLiteral("openai")
                                 << sse({ { { "choices", { { { "delta", { { field, t } } } } } } },
                                            { { "choices", { { { "delta", { { "content", reply } } } } } } },
                                            { { "choices",
                                                { { { "delta", nlohmann::json::object() },
                                                    { "finish_reason", "stop" } } } } } },
                                        true);
        QTest::newRow("anthropic thinking, ping")
            << QStringLiteral("anthropic")
            << sse({ { { "type", "message_start" },
                         { "message", { { "usage", { { "input_tokens", 5 } } } } } },
                       { { "type", "ping" } }, // Anthropic's keep-alive between events
                       { { "type", "content_block_delta" },
                           { "delta", { { "type", "thinking_delta" }, { "thinking", t } } } },
                       { { "type", "content_block_delta" },
                           { "delta", { { "type", "text_delta" }, { "text", reply } } } },
                       { { "type", "message_delta" }, { "delta", { { "stop_reason", "end_turn" } } } },
                       { { "type", "message_stop" } } },
                   false);
    }
    void reasoningIsKeptButNeverParsed()
    {
        QFETCH(QString, protocol);
        QFETCH(QByteArray, raw);
        m_server->enqueue(ScriptedReply::stream(raw));
        const AgentResult result = agent(protocol, true)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved); // the answer, not the thought's code block
        QVERIFY(result.proposal().rawReply.startsWith(QStringLiteral("[reasoning")));
        QVERIFY(result.proposal().rawReply.contains(QStringLiteral("Maybe BLOCK_SIZE = 4096?")));
        QVERIFY(result.proposal().rawReply.contains(QStringLiteral("DESCRIPTION: BLOCK_SIZE 256 -> 512")));
    }

    // A reasoning model served without a reasoning parser: its thoughts arrive in the content as a
    // <think> block, code included; the proposal is the answer after it.
    void thinkBlockInTheContentIsNotTheProposal()
    {
        const QString content
            = QStringLiteral("<think>\nWhat about this?\n```python\nBLOCK_SIZE = 4096\n```\n"
                             "</think>\n")
            + goodReply();
        m_server->enqueue(ScriptedReply::reply(content));
        const AgentResult result = agent(QStringLiteral("openai"), true)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved);
        QVERIFY(result.proposal().rawReply.contains(QStringLiteral("<think>"))); // kept for review
    }

    // llama.cpp reports a failure inside an OpenAI-style stream (`data: {"error": ...}`) after the
    // 200: read as the server's error, in its words, not as an unreadable or empty reply.
    void llamaCppErrorInsideTheStream()
    {
        m_server->enqueue(ScriptedReply::stream(
            "data: {\"choices\":[{\"delta\":{\"content\":\"DESCRIPTION: \"}}]}\n\n"
            "data: {\"error\":{\"code\":500,\"message\":\"the context is full (n_ctx 4096)\","
            "\"type\":\"server_error\"}}\n\n"));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("openai"), true, 3)->propose(context());
        QVERIFY(!result.ok());
        QVERIFY2(result.error().reason.contains(QStringLiteral("the context is full (n_ctx 4096)")),
            qPrintable(result.error().reason));
        // Too small a context fails every request alike: a configuration error naming the flag.
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY2(result.error().reason.contains(QStringLiteral("llama.cpp -c")),
            qPrintable(result.error().reason));
        QCOMPARE(m_server->requests().size(), 1);
    }

    // A refusal or a content filter is said as such, a failed proposal (not a configuration error:
    // the next kernel or prompt may pass), with whatever the model said.
    void refusalsAndContentFiltersAreSaidAsSuch_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("reasonHas");
        QTest::newRow("openai refusal") << QByteArray(
            "data: {\"choices\":[{\"delta\":{\"refusal\":\"I can't help with that.\"}}]}\n\n"
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
                                        << QStringLiteral("the model refused: I can't help with that.");
        QTest::newRow("content filter") << QByteArray(
            "data: {\"choices\":[{\"delta\":{\"content\":\"DESCRIPTION: x\\n```py\"}}]}\n\n"
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n"
            "data: [DONE]\n\n") << QStringLiteral("content filter");
    }
    void refusalsAndContentFiltersAreSaidAsSuch()
    {
        QFETCH(QByteArray, raw);
        QFETCH(QString, reasonHas);
        m_server->enqueue(ScriptedReply::stream(raw));
        const AgentResult result = agent(QStringLiteral("openai"), true)->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::BadReply);
        QVERIFY2(result.error().reason.contains(reasonHas), qPrintable(result.error().reason));
        QCOMPARE(m_server->requests().size(), 1); // not retried as a transport fault
    }

    // A key in the base URL would be written into run.json and the log: refused before any request,
    // naming where it sits but not its value.
    void secretInTheBaseUrlIsRefused()
    {
        for (const QString &base : { QStringLiteral("http://127.0.0.1:9/v1?api_key=abc123secret"),
                 QStringLiteral("http://user:abc123secret@127.0.0.1:9/v1"),
                 QStringLiteral("http://127.0.0.1:9/v1?token=abc123secret") }) {
            AgentConfig c;
            c.kind = AgentConfig::Kind::Llm;
            c.llmProtocol = QStringLiteral("openai");
            c.baseUrl = base;
            c.model = QStringLiteral("test-model");
            const LlmAgent a(c, kKey, PriceTable());
            const QString why = a.configurationError();
            QVERIFY2(why.contains(QStringLiteral("carries a secret")),
                qPrintable(base + QStringLiteral(": ") + why));
            QVERIFY2(!why.contains(QStringLiteral("abc123secret")), qPrintable(why));
        }
        // An ordinary query parameter is not a secret.
        QVERIFY(
            LlmProtocol::secretInUrl(QUrl(QStringLiteral("http://h/v1?api-version=2024-06-01"))).isEmpty());
    }

    void retriesAfter429HonouringRetryAfter()
    {
        ScriptedReply limited = ScriptedReply::error(429, QStringLiteral("rate limited"));
        limited.headers << qMakePair(QByteArray("Retry-After"), QByteArray("1"));
        m_server->enqueue(limited);
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        QElapsedTimer t;
        t.start();
        const AgentResult result = agent(QStringLiteral("anthropic"), true)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.usage().attempts, 2);
        QCOMPARE(m_server->requests().size(), 2);
        QVERIFY2(t.elapsed() >= 900, "Retry-After: 1 must be honoured (backoff alone is 10 ms)");
        QVERIFY(t.elapsed() < 8000);
    }

    void retryAfterMsWins()
    {
        // OpenAI's finer header: 1200 ms here, while Retry-After says 0.
        ScriptedReply limited = ScriptedReply::error(429, QStringLiteral("rate limited"));
        limited.headers << qMakePair(QByteArray("retry-after-ms"), QByteArray("1200"))
                        << qMakePair(QByteArray("Retry-After"), QByteArray("0"));
        m_server->enqueue(limited);
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        QElapsedTimer t;
        t.start();
        const AgentResult result = agent(QStringLiteral("openai"), true)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QVERIFY2(t.elapsed() >= 1100, qPrintable(QString::number(t.elapsed())));
    }

    // vLLM's error shapes: the old flat body, the newer nested one (OpenAI's), and an error inside
    // the stream after the 200. Each is read in the server's words and, since the same request fails
    // alike every time, is a configuration error naming the server's flag.
    void vllmErrorShapesAreRead_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        // Plain literals: moc's lexer reads the apostrophe in a raw string as a char literal and skips
        // tests.
        const QByteArray message = "\"message\":\"This model's maximum context length is 4096 tokens. "
                                   "However, you requested 16384 tokens.\",\"type\":\"BadRequestError\","
                                   "\"param\":null,\"code\":400";
        QTest::newRow("old flat body") << 400 << "{\"object\":\"error\"," + message + "}";
        QTest::newRow("new nested body") << 400 << "{\"error\":{" + message + "}}";
        QTest::newRow("in the stream")
            << 200
            << "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
               "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
               "data: {\"error\":{"
                + message + "}}\n\ndata: [DONE]\n\n";
    }
    void vllmErrorShapesAreRead()
    {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        m_server->enqueue(
            status == 200 ? ScriptedReply::stream(body) : ScriptedReply::rawReply(status, body));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("openai"), status == 200, 2)->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY(!result.error().retryable);
        QVERIFY2(result.error().reason.contains(
                     QStringLiteral("BadRequestError: This model's maximum context length is 4096")),
            qPrintable(result.error().reason));
        QVERIFY2(result.error().reason.contains(QStringLiteral("vLLM --max-model-len")),
            qPrintable(result.error().reason));
        QCOMPARE(m_server->requests().size(), 1);
    }

    void exhaustedQuotaIsNotRetried()
    {
        // OpenAI answers an exhausted quota with 429 too; waiting does not refill it.
        ScriptedReply quota;
        quota.kind = ScriptedReply::Kind::Raw;
        quota.status = 429;
        quota.raw
            = R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.",)"
              R"("type":"insufficient_quota","param":null,"code":"insufficient_quota"}})";
        m_server->enqueue(quota);
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("openai"), true, 4)->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Config); // the loop pauses: no kernel pays for it
        QVERIFY(!result.error().retryable);
        QVERIFY2(result.error().reason.contains(QStringLiteral("quota is exhausted")),
            qPrintable(result.error().reason));
        QCOMPARE(m_server->requests().size(), 1);
    }

    void maxCompletionTokensWhenTheModelAsksForIt()
    {
        // OpenAI's reasoning models refuse max_tokens with a 400 naming the other parameter: the
        // client asks again at once under that name, and the agent keeps using it.
        // Plain literals: moc reads an apostrophe inside a raw string as a character literal.
        const QByteArray refused
            = "{\"error\":{\"message\":\"Unsupported parameter: \x27max_tokens\x27 is not supported with "
              "this model. Use \x27max_completion_tokens\x27 instead.\",\"type\":\"invalid_request_error\","
              "\"param\":\"max_tokens\",\"code\":\"unsupported_parameter\"}}";
        m_server->enqueue(ScriptedReply::rawReply(400, refused));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        auto a = agent(QStringLiteral("openai"), false, 1); // one attempt: the switch is not a retry
        const AgentResult first = a->propose(context());
        QVERIFY2(first.ok(), qPrintable(first.ok() ? QString() : first.error().reason));
        QVERIFY(a->propose(context()).ok());
        const auto requests = m_server->requests();
        QCOMPARE(requests.size(), 3);
        QVERIFY(requests[0].body.contains("\"max_tokens\""));
        for (int i : { 1, 2 }) {
            QVERIFY2(requests[i].body.contains("\"max_completion_tokens\""), requests[i].body.constData());
            QVERIFY(!requests[i].body.contains("\"max_tokens\""));
        }
    }

    void redirectToAnotherHostDoesNotCarryTheKey()
    {
        // 127.0.0.1 redirects to localhost: another origin. The key must not follow.
        LoopbackLlmServer other;
        QVERIFY(other.start());
        other.enqueue(ScriptedReply::reply(goodReply()));
        ScriptedReply moved;
        moved.kind = ScriptedReply::Kind::Raw;
        moved.status = 307;
        moved.headers << qMakePair(QByteArray("Location"),
            QStringLiteral("http://localhost:%1/v1/messages").arg(other.port()).toUtf8());
        m_server->enqueue(moved);
        const AgentResult result = agent(QStringLiteral("anthropic"), true, 3)->propose(context());
        QVERIFY(!result.ok());
        QVERIFY(!result.error().retryable);
        // The base URL's fault, not an outage: the loop pauses on it instead of tripping the breaker.
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY2(result.error().reason.contains(QStringLiteral("set --base-url to the final URL"))
                && result.error().reason.contains(QStringLiteral("localhost:%1").arg(other.port())),
            qPrintable(result.error().reason));
        QCOMPARE(m_server->requests().size(), 1); // not retried: every attempt would be redirected alike
        for (const ak::test::RecordedRequest &r : other.requests())
            QVERIFY2(!r.headers.contains("x-api-key"), "the key reached another origin");
        QCOMPARE(other.requests().size(), 0);
    }

    void serverErrorsExhaustRetries()
    {
        for (int i = 0; i < 3; ++i)
            m_server->enqueue(ScriptedReply::error(i == 1 ? 503 : 500, QStringLiteral("upstream failed")));
        m_server->enqueue(ScriptedReply::reply(goodReply())); // must not be reached: 3 attempts only
        const AgentResult result = agent(QStringLiteral("openai"), true, 3)->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Http);
        QVERIFY(result.error().retryable);
        QVERIFY2(result.error().reason.contains(QStringLiteral("HTTP 500"))
                && result.error().reason.contains(QStringLiteral("upstream failed")),
            qPrintable(result.error().reason));
        QCOMPARE(result.usage().attempts, 3);
        QCOMPARE(m_server->requests().size(), 3);
        QCOMPARE(m_server->pendingReplies(), 1);
    }

    void retriesStopAtTheRetryBudget()
    {
        // A server that keeps failing with a long Retry-After: the request gives up once the next
        // wait would pass its budget, instead of sleeping through every attempt.
        for (int i = 0; i < 5; ++i) {
            ScriptedReply busy = ScriptedReply::error(503, QStringLiteral("overloaded"));
            busy.headers << qMakePair(QByteArray("retry-after-ms"), QByteArray("400"));
            m_server->enqueue(busy);
        }
        auto a = agent(QStringLiteral("openai"), true, 5);
        a->requestDefaults().retryBudgetMs = 1000;
        QElapsedTimer t;
        t.start();
        const AgentResult result = a->propose(context());
        QVERIFY(!result.ok());
        QVERIFY(result.error().retryable);
        QVERIFY2(result.error().reason.contains(QStringLiteral("retry budget of 1.0 s")),
            qPrintable(result.error().reason));
        QCOMPARE(m_server->requests().size(), 3); // waits of 400-440 ms: the third would end past 1 s
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
    }

    void noRetryOnClientError()
    {
        m_server->enqueue(ScriptedReply::error(400, QStringLiteral("max_tokens is too large")));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("openai"), true, 4)->propose(context());
        QVERIFY(!result.ok());
        // A rejected parameter fails every kernel alike: a configuration error (the loop stops), not a
        // failed experiment.
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY(!result.error().retryable);
        QVERIFY(result.error().reason.contains(QStringLiteral("max_tokens is too large")));
        QVERIFY(result.error().reason.contains(QStringLiteral("rejected the request's parameters")));
        QCOMPARE(m_server->requests().size(), 1);
    }

    void misconfigurationsAreConfigErrors_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("names");
        QTest::newRow("bad key") << 401 << QStringLiteral("refused the API key");
        QTest::newRow("forbidden") << 403 << QStringLiteral("refused the API key");
        QTest::newRow("wrong model") << 404 << QStringLiteral("model \"test-model\" or endpoint");
    }

    void misconfigurationsAreConfigErrors()
    {
        QFETCH(int, status);
        QFETCH(QString, names);
        m_server->enqueue(ScriptedReply::error(status, QStringLiteral("scripted")));
        const AgentResult result = agent(QStringLiteral("openai"), true, 4)->propose(context());
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY2(result.error().reason.contains(names), qPrintable(result.error().reason));
        QCOMPARE(m_server->requests().size(), 1);
        // A rate limit that outlasts the retries is not a misconfiguration.
        for (int i = 0; i < 2; ++i)
            m_server->enqueue(ScriptedReply::error(429, QStringLiteral("slow down")));
        const AgentResult limited = agent(QStringLiteral("openai"), true, 2)->propose(context());
        QCOMPARE(limited.error().kind, AgentError::Kind::Http);
        QVERIFY(limited.error().retryable);
    }

    void keyIsRedactedFromErrors()
    {
        m_server->enqueue(ScriptedReply::error(401, QStringLiteral("Incorrect API key provided: ") + kKey));
        const AgentResult result = agent(QStringLiteral("openai"), false, 3)->propose(context());
        QVERIFY(!result.ok());
        QVERIFY(!result.error().reason.contains(kKey));
        QVERIFY(result.error().reason.contains(QStringLiteral("[redacted]")));
        QVERIFY(result.error().reason.contains(QStringLiteral("401")));
        QCOMPARE(m_server->requests().size(), 1); // 401 is not retried
    }

    void droppedConnectionIsRetried_data()
    {
        QTest::addColumn<int>("dropAfter");
        QTest::newRow("before-answer") << -2;
        QTest::newRow("mid-stream") << 3;
    }
    void droppedConnectionIsRetried()
    {
        QFETCH(int, dropAfter);
        ScriptedReply drop = ScriptedReply::reply(goodReply());
        if (dropAfter == -2) {
            drop.kind = ScriptedReply::Kind::Drop;
        } else {
            drop.dropAfterEvents = dropAfter;
            drop.chunkDelayMs = 30;
        }
        m_server->enqueue(drop);
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("openai"), true, 3)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved); // not the half-streamed text of the first attempt
        QCOMPARE(m_server->requests().size(), 2);
        // Qt itself resends a request whose connection closed before any byte of the answer; a
        // connection lost mid-answer is retried by the client.
        if (dropAfter >= 0)
            QCOMPARE(result.usage().attempts, 2);
    }

    // A stream that closes cleanly (whole chunked body, no connection error) before [DONE]: a
    // fragment, retried, never taken as the (bad) reply.
    void cutOffStreamIsRetried()
    {
        m_server->enqueue(ScriptedReply::stream(
            "data: {\"choices\":[{\"delta\":{\"content\":\"DESCRIPTION: BLOCK_SIZE 256 -> 512\\n```python\\n"
            "KERNEL_TYPE = \\\"softmax\\\"\\n\"},\"finish_reason\":null}]}\n\n"));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("openai"), true, 3)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved);
        QCOMPARE(result.usage().attempts, 2);
        QCOMPARE(m_server->requests().size(), 2);

        // Only one attempt: the cut-off stream is the error, a retryable outage, not a bad reply.
        m_server->enqueue(
            ScriptedReply::stream("data: {\"choices\":[{\"delta\":{\"content\":\"DESC\"}}]}\n\n"));
        const AgentResult cut = agent(QStringLiteral("openai"), true, 1)->propose(context());
        QVERIFY(!cut.ok());
        QCOMPARE(cut.error().kind, AgentError::Kind::Network);
        QVERIFY(cut.error().retryable);
        QVERIFY2(cut.error().reason.contains(QStringLiteral("before its end marker")),
            qPrintable(cut.error().reason));
    }

    // Ollama's /v1/chat/completions, byte for byte as it streams: every chunk carries
    // system_fingerprint fp_ollama and the assistant role, the last one finish_reason and the usage
    // together, then [DONE].
    void ollamaV1Stream()
    {
        QByteArray raw;
        auto chunk = [&](const nlohmann::json &delta, const nlohmann::json &finish, const char *usage) {
            nlohmann::json c = { { "id", "chatcmpl-512" }, { "object", "chat.completion.chunk" },
                { "created", 1733400000 }, { "model", "qwen2.5-coder:7b" },
                { "system_fingerprint", "fp_ollama" },
                { "choices", { { { "index", 0 }, { "delta", delta }, { "finish_reason", finish } } } } };
            if (usage)
                c["usage"] = nlohmann::json::parse(usage);
            raw += "data: " + QByteArray::fromStdString(c.dump()) + "\n\n";
        };
        const QString reply = goodReply();
        for (qsizetype i = 0; i < reply.size(); i += 40)
            chunk(
                { { "role", "assistant" }, { "content", reply.mid(i, 40).toStdString() } }, nullptr, nullptr);
        chunk({ { "role", "assistant" }, { "content", "" } }, "stop",
            R"({"prompt_tokens":812,"completion_tokens":97,"total_tokens":909})");
        raw += "data: [DONE]\n\n";
        m_server->enqueue(ScriptedReply::stream(raw));
        const AgentResult result = agent(QStringLiteral("openai"), true)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.proposal().kernelPy, kImproved);
        QCOMPARE(result.proposal().description, QStringLiteral("BLOCK_SIZE 256 -> 512 for fewer programs"));
        QCOMPARE(result.usage().tokensIn, 812);
        QCOMPARE(result.usage().tokensOut, 97);
        QCOMPARE(m_server->requests().size(), 1);
    }

    // llama.cpp before 2024-09 (and ik_llama.cpp) end a chat stream without [DONE], after the chunk
    // with finish_reason: a complete reply, taken at the first attempt.
    void streamWithFinishReasonButNoDoneIsComplete()
    {
        const nlohmann::json content
            = { { "choices", { { { "delta", { { "content", goodReply().toStdString() } } } } } } };
        const nlohmann::json last
            = { { "choices", { { { "delta", nlohmann::json::object() }, { "finish_reason", "stop" } } } } };
        m_server->enqueue(ScriptedReply::stream("data: " + QByteArray::fromStdString(content.dump())
            + "\n\ndata: " + QByteArray::fromStdString(last.dump()) + "\n\n"));
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        const AgentResult result = agent(QStringLiteral("openai"), true, 3)->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        QCOMPARE(result.usage().attempts, 1);
        QCOMPARE(m_server->requests().size(), 1);
    }

    void droppedConnectionsExhaustRetries()
    {
        for (int i = 0; i < 8; ++i) {
            ScriptedReply drop = ScriptedReply::reply(goodReply());
            drop.dropAfterEvents = 2;
            drop.chunkDelayMs = 20;
            m_server->enqueue(drop);
        }
        const AgentResult result = agent(QStringLiteral("anthropic"), true, 2)->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Network);
        QVERIFY(result.error().retryable);
        QVERIFY2(
            result.error().reason.contains(QStringLiteral("mid-reply")), qPrintable(result.error().reason));
        QCOMPARE(result.usage().attempts, 2);
    }

    void idleTimeout()
    {
        ScriptedReply stall = ScriptedReply::reply(goodReply());
        stall.stallAfterEvents = 2;
        m_server->enqueue(stall);
        auto a = agent(QStringLiteral("anthropic"), true, 1);
        a->requestDefaults().idleTimeoutMs = 700;
        QElapsedTimer t;
        t.start();
        const AgentResult result = a->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Timeout);
        QVERIFY(result.error().retryable);
        QVERIFY2(t.elapsed() >= 600 && t.elapsed() < 5000, qPrintable(QString::number(t.elapsed())));
    }

    void firstByteTimeoutIsSeparateFromIdle()
    {
        // A non-streamed reply sends nothing until the model is done: 1.2 s of silence before the
        // status line is fine under a 3 s first-byte limit although the idle limit is 0.5 s ...
        ScriptedReply late = ScriptedReply::reply(goodReply());
        late.delayMs = 1200;
        m_server->enqueue(late);
        auto a = agent(QStringLiteral("openai"), false, 1);
        a->requestDefaults().idleTimeoutMs = 500;
        a->requestDefaults().firstByteTimeoutMs = 3000;
        AgentResult result = a->propose(context());
        QVERIFY2(result.ok(), qPrintable(result.error().reason));
        // ... and a server that never starts answering is named as such once the first-byte limit passes.
        ScriptedReply never = ScriptedReply::reply(goodReply());
        never.delayMs = 5000;
        m_server->enqueue(never);
        a->requestDefaults().firstByteTimeoutMs = 800;
        QElapsedTimer t;
        t.start();
        result = a->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Timeout);
        QVERIFY2(result.error().reason.contains(QStringLiteral("first_byte_timeout_sec")),
            qPrintable(result.error().reason));
        QVERIFY2(t.elapsed() >= 700 && t.elapsed() < 4000, qPrintable(QString::number(t.elapsed())));
    }

    void totalTimeout()
    {
        ScriptedReply slow = ScriptedReply::reply(goodReply()); // trickles: never idle, never done in time
        slow.chunkChars = 4;
        slow.chunkDelayMs = 200;
        m_server->enqueue(slow);
        auto a = agent(QStringLiteral("openai"), true, 1);
        a->requestDefaults().totalTimeoutMs = 1000;
        a->requestDefaults().idleTimeoutMs = 5000;
        QElapsedTimer t;
        t.start();
        const AgentResult result = a->propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Timeout);
        QVERIFY2(result.error().reason.contains(QStringLiteral("within")), qPrintable(result.error().reason));
        QVERIFY2(t.elapsed() >= 900 && t.elapsed() < 5000, qPrintable(QString::number(t.elapsed())));
    }

    void networkDown()
    {
        QTcpServer closed;
        QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
        const quint16 port = closed.serverPort();
        closed.close(); // nothing listens there now
        AgentConfig c;
        c.llmProtocol = QStringLiteral("openai");
        c.baseUrl = QStringLiteral("http://127.0.0.1:%1/v1").arg(port);
        c.model = QStringLiteral("m");
        c.maxAttempts = 2;
        LlmAgent a(c);
        a.requestDefaults().initialBackoffMs = 10;
        const AgentResult result = a.propose(context());
        QVERIFY(!result.ok());
        // Nothing listens after every attempt: a configuration error naming the URL (the loop stops
        // rather than failing kernel after kernel).
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY2(
            result.error().reason.contains(QStringLiteral("cannot reach the server at http://127.0.0.1")),
            qPrintable(result.error().reason));
        QCOMPARE(result.usage().attempts, 2);
    }

    void stopFromAnotherThread()
    {
        ScriptedReply slow = ScriptedReply::reply(goodReply());
        slow.delayMs = 20000;
        m_server->enqueue(slow);
        auto a = agent(QStringLiteral("openai"), true, 3);
        LlmAgent *raw = a.get();
        std::thread stopper([raw] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            raw->requestStop();
        });
        QElapsedTimer t;
        t.start();
        const AgentResult result = a->propose(context());
        stopper.join();
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Cancelled);
        QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed())));
        // Still stopped until cleared; then it works again.
        QCOMPARE(a->propose(context()).error().kind, AgentError::Kind::Cancelled);
        a->clearStop();
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        QVERIFY(a->propose(context()).ok());
    }

    void truncatedReplySaysSo()
    {
        ScriptedReply cut = ScriptedReply::reply(
            QStringLiteral("DESCRIPTION: x\n```python\nKERNEL_TYPE = \"softmax\"\ndef kernel_fn(x):\n"));
        cut.stopReason = QStringLiteral("max_tokens");
        m_server->enqueue(cut);
        const AgentResult result = agent(QStringLiteral("anthropic"), true)->propose(context());
        QVERIFY(!result.ok());
        QVERIFY2(
            result.error().reason.contains(QStringLiteral("max_tokens")), qPrintable(result.error().reason));
    }

    void keyFromEnvironmentAndMissingKey()
    {
        qputenv("AK_LOOPBACK_TEST_KEY", "env-key-987654");
        AgentConfig c;
        c.llmProtocol = QStringLiteral("openai");
        c.baseUrl = m_server->baseUrl();
        c.model = QStringLiteral("m");
        c.apiKeyEnv = QStringLiteral("AK_LOOPBACK_TEST_KEY");
        m_server->enqueue(ScriptedReply::reply(goodReply()));
        LlmAgent fromEnv(c);
        QVERIFY(fromEnv.propose(context()).ok());
        QCOMPARE(
            m_server->requests().first().headers.value("authorization"), QByteArray("Bearer env-key-987654"));
        qunsetenv("AK_LOOPBACK_TEST_KEY");

        // The public endpoint without a key: a configuration error before any connection is made.
        c.baseUrl.clear();
        c.llmProtocol = QStringLiteral("anthropic");
        LlmAgent noKey(c);
        const AgentResult result = noKey.propose(context());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().kind, AgentError::Kind::Config);
        QVERIFY2(result.error().reason.contains(QStringLiteral("AK_LOOPBACK_TEST_KEY")),
            qPrintable(result.error().reason));
        QVERIFY(!result.error().retryable);
    }

    void priceTable()
    {
        PriceTable t;
        QString error;
        QVERIFY(PriceTable::fromJson(
            R"({"claude-sonnet-4": {"input": 3, "output": 15}, "claude-sonnet-4-5": {"input": 4, "output": 20}})",
            &t, &error));
        QCOMPARE(t.cost(QStringLiteral("claude-sonnet-4-20250514"), 1000000, 0), 3.0);
        QCOMPARE(
            t.cost(QStringLiteral("claude-sonnet-4-5-20250929"), 0, 1000000), 20.0); // longest prefix wins
        QCOMPARE(t.cost(QStringLiteral("llama3:8b"), 5000, 5000), 0.0); // unknown: 0, not a guess
        QVERIFY(!PriceTable::fromJson(R"({"m": {"input": "cheap"}})", &t, &error));
        QVERIFY(error.contains(QStringLiteral("\"m\".input")));
        PriceTable back;
        PriceTable orig;
        orig.set(QStringLiteral("x"), ModelPrice { 1.5, 2.5 });
        QVERIFY(PriceTable::fromJson(orig.toJson(), &back, &error));
        QCOMPARE(back.cost(QStringLiteral("x"), 1000000, 1000000), 4.0);
    }

    void sseDecoderAcrossArbitrarySplits()
    {
        const QByteArray stream = ": comment\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\ndata: line1\ndata: "
                                  "line2\n\nevent: b\ndata:no-space\n\ndata: tail";
        for (int split = 1; split < stream.size(); split += 3) {
            SseDecoder d;
            QVector<SseEvent> events;
            for (int i = 0; i < stream.size(); i += split)
                events += d.feed(stream.mid(i, split));
            events += d.finish();
            QCOMPARE(events.size(), 4);
            QCOMPARE(events.at(0).event, QStringLiteral("a"));
            QCOMPARE(events.at(0).data, QByteArray("{\"x\":1}"));
            QCOMPARE(events.at(1).data, QByteArray("line1\nline2"));
            QCOMPARE(events.at(2).event, QStringLiteral("b"));
            QCOMPARE(events.at(2).data, QByteArray("no-space"));
            QCOMPARE(events.at(3).data, QByteArray("tail"));
        }
    }

    void retryAfterParsing()
    {
        QCOMPARE(LlmClient::retryAfterMs("2"), 2000);
        QCOMPARE(LlmClient::retryAfterMs(""), -1);
        QCOMPARE(LlmClient::retryAfterMs("soon"), -1);
        const QByteArray date
            = QDateTime::currentDateTimeUtc().addSecs(30).toString(Qt::RFC2822Date).toLatin1();
        const int ms = LlmClient::retryAfterMs(date);
        QVERIFY2(ms > 25000 && ms <= 31000, qPrintable(QString::number(ms)));
        const QByteArray gmt = QLocale::c()
                                   .toString(QDateTime::currentDateTimeUtc().addSecs(60),
                                       QStringLiteral("ddd, dd MMM yyyy hh:mm:ss 'GMT'"))
                                   .toLatin1();
        const int gmtMs = LlmClient::retryAfterMs(gmt);
        QVERIFY2(gmtMs > 55000 && gmtMs <= 61000, gmt.constData());
    }

    void retryDelaysAreJitteredAndHonourLongRetryAfter()
    {
        LlmRequest r; // 1 s doubling to 60 s; Retry-After up to 15 min
        // Our back-off: half fixed, half random, so agents on several devices spread out.
        QCOMPARE(LlmClient::retryDelayMs(r, 1, -1, 0.0), 500);
        QCOMPARE(LlmClient::retryDelayMs(r, 1, -1, 0.999), 999);
        QCOMPARE(LlmClient::retryDelayMs(r, 3, -1, 0.0), 2000);
        QCOMPARE(LlmClient::retryDelayMs(r, 30, -1, 0.0), 30000); // capped at 60 s, jittered
        QVERIFY(LlmClient::retryDelayMs(r, 30, -1, 0.5) < 60000);
        QVERIFY(LlmClient::retryDelayMs(r, 2, -1, 0.1) != LlmClient::retryDelayMs(r, 2, -1, 0.9));
        // The server's word is kept, beyond our 60 s (a quota window of 5 minutes), plus up to 10 %.
        QCOMPARE(LlmClient::retryDelayMs(r, 1, 300000, 0.0), 300000);
        QCOMPARE(LlmClient::retryDelayMs(r, 1, 300000, 0.5), 315000);
        QCOMPARE(LlmClient::retryDelayMs(r, 1, 0, 0.7), 0);
        QCOMPARE(LlmClient::retryDelayMs(r, 1, 3600000, 0.0), 900000); // at most 15 min
    }
};

AK_TEST_CLASS(LlmAgentTest)
#include "tst_llmagent.moc"
