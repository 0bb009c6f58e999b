#pragma once

// Test rig for ExperimentLoopTest and ExperimentLoopSteeringTest: a real run (RunStore in a
// temporary folder, three CPU softmax kernels A, B, C in Amdahl order) and the real ExperimentLoop,
// with a scripted agent and a scripted benchmark in place of the model and the harness, so every
// outcome (keep, revert, failure, environment trouble, steering, move-on rules) is chosen by a test.
#include "agents/agent.h"
#include "gitrepo.h"
#include "loop/experimentloop.h"
#include "loop/loopsession.h"
#include "requestqueue.h"
#include "runstore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QQueue>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <memory>

namespace ak::test {

using nlohmann::json;

inline QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The CPU softmax starter with a TEST_SIZES contract (the harness's, which a proposal must keep).
inline QByteArray starter()
{
    static const QByteArray text = [] {
        QByteArray s
            = readFile(QStringLiteral(AUTOKERNEL_SOURCE_DIR "/agent/python/harness/starters/cpu/softmax.py"));
        s.replace("KERNEL_TYPE = \"softmax\"\n",
            "KERNEL_TYPE = \"softmax\"\n\nTEST_SIZES = [{\"rows\": 64, \"cols\": 128}]\n");
        return s;
    }();
    return text;
}

// The starter with ROW_CHUNK = n: a distinct, valid proposal per n.
inline QByteArray variant(int n)
{
    QByteArray s = starter();
    s.replace(QByteArray("ROW_CHUNK = 64\n"), QByteArray("ROW_CHUNK = " + QByteArray::number(n) + '\n'));
    return s;
}

inline AgentResult proposal(
    const QByteArray &kernelPy, const QString &description = QStringLiteral("scripted change"))
{
    AgentProposal p;
    p.kernelPy = QString::fromUtf8(kernelPy);
    p.description = description;
    p.usage.tokensIn = 1000;
    p.usage.tokensOut = 300;
    p.usage.cost = 0.25;
    return AgentResult::success(p);
}

inline AgentResult agentError(AgentError::Kind kind, const QString &reason)
{
    AgentError e;
    e.kind = kind;
    e.reason = reason;
    e.rawReply = QStringLiteral("I'm sorry, I can't help with that.");
    e.usage.tokensIn = 120;
    e.usage.tokensOut = 45;
    return AgentResult::failure(e);
}

inline BenchResult ok(double latencyUs, double noisePct = 0.2, double pctPeak = std::nan(""))
{
    BenchResult r;
    r.status = BenchStatus::Ok;
    r.correct = true;
    r.metrics.correct = true;
    r.metrics.latencyUs = latencyUs;
    r.metrics.refLatencyUs = 50;
    r.metrics.speedup = 50 / latencyUs;
    r.metrics.noisePct = noisePct;
    r.metrics.pctPeak = pctPeak;
    r.kernelType = QStringLiteral("softmax");
    return r;
}

inline BenchResult bad(BenchStatus status, const QString &failure, bool environment = false)
{
    BenchResult r;
    r.status = status;
    r.failure = failure;
    r.environmentError = environment;
    return r;
}

// Answers with the queued scripts in order; with none left, a fresh ROW_CHUNK each time.
class ScriptedAgent : public Agent
{
public:
    using Script = std::function<AgentResult(const AgentContext &)>;

    QString name() const override { return QStringLiteral("fake"); }

    AgentResult propose(const AgentContext &context) override
    {
        QElapsedTimer timer;
        timer.start();
        contexts.push_back(context);
        if (sleepMs > 0)
            QThread::msleep(sleepMs);
        const AgentResult r = scripts.isEmpty() ? proposal(variant(m_next++)) : scripts.dequeue()(context);
        return finish(r, timer.nsecsElapsed() / 1e9);
    }

    void enqueue(const AgentResult &r)
    {
        scripts.enqueue([r](const AgentContext &) { return r; });
    }
    void enqueue(const Script &s) { scripts.enqueue(s); }

    QQueue<Script> scripts;
    QVector<AgentContext> contexts;
    int sleepMs = 0;

private:
    int m_next = 1000;
};

// Answers each request with the next queued result (none left: 100 us, correct) and records what it
// was asked to measure.
struct ScriptedBench
{
    BenchResult run(const BenchRequest &request)
    {
        if (before)
            before();
        requests.push_back(request);
        seen.push_back(readFile(request.kernelPath));
        if (sleepMs > 0 && requests.size() > 1)
            QThread::msleep(sleepMs);
        return results.isEmpty() ? ok(100) : results.dequeue();
    }
    bool measured(const QByteArray &kernelPy) const { return seen.contains(kernelPy); }

    QQueue<BenchResult> results;
    QVector<BenchRequest> requests;
    QVector<QByteArray> seen;
    int sleepMs = 0;
    std::function<void()> before; // called as each measurement starts (fault injection)
};

const QString kA = QStringLiteral("01-softmax");
const QString kB = QStringLiteral("02-softmax");
const QString kC = QStringLiteral("03-softmax");

// A run with three softmax kernels (A, B, C in Amdahl order) and the loop over it.
struct Rig
{
    QTemporaryDir tmp;
    QString dir;
    ScriptedAgent agent;
    ScriptedBench bench;
    std::unique_ptr<LoopSession> session;
    RunStore *storePtr = nullptr; // owned by session
    std::unique_ptr<ExperimentLoop> loop;
    QStringList messages;
    QString error;

    // `config` goes into run.json (move_on, settings); the rest is what a CPU profile writes.
    bool create(const json &config = json::object())
    {
        dir = tmp.filePath(QStringLiteral("run"));
        json runConfig = { { "model", "test" }, { "python", "/usr/bin/python3" }, { "activity", "cpu" } };
        runConfig.update(config);
        std::unique_ptr<RunStore> store = RunStore::create(dir, runConfig, &error);
        if (!store)
            return false;
        const double shares[] = { 0.5, 0.3, 0.2 };
        int rank = 1;
        for (const QString &name : { kA, kB, kC }) {
            KernelRecord k;
            k.rank = rank;
            k.folder = QStringLiteral("kernels/") + name;
            k.name = QStringLiteral("aten::_softmax");
            k.opType = QStringLiteral("softmax");
            k.dtype = QStringLiteral("fp32");
            k.share = shares[rank - 1];
            k.modelSpeedupAt90 = 1.0;
            ++rank;
            if (store->addKernel(k, starter(), &error).id == 0)
                return false;
        }
        attach(std::move(store));
        return true;
    }

    bool reopen()
    {
        loop.reset();
        session.reset(); // closes the store: the lock is released
        std::unique_ptr<RunStore> store = RunStore::open(dir, &error);
        if (!store)
            return false;
        attach(std::move(store));
        return true;
    }

    void attach(std::unique_ptr<RunStore> store)
    {
        storePtr = store.get();
        session = std::make_unique<LoopSession>(std::move(store));
        session->onMessage = [this](const QString &line) { messages << line; };
        ExperimentLoopConfig cfg;
        cfg.label = QStringLiteral("test");
        cfg.quickBench = true;
        cfg.writeRetryMs = 20; // refused writes: short back-off in tests
        cfg.breakerPauseSec = 1; // the agent's breaker: a short pause in tests
        loop = std::make_unique<ExperimentLoop>(
            session.get(), &agent, [this](const BenchRequest &r) { return bench.run(r); }, cfg);
    }

    ExperimentLoop::Step step() { return loop->step(); }
    // The tests look between steps, on the loop's own thread: no other thread uses the store then,
    // so the rig keeps a pointer of its own rather than taking the session's lock for each look.
    RunStore &store() { return *storePtr; }
    const RunSnapshot &state() { return storePtr->state(); }
    const KernelRecord &kernel(const QString &name) { return *state().kernel(name); }
    const Experiment &last() { return state().experiments.last(); }
    const Experiment &experiment(int id) { return *state().experiment(id); }
    QByteArray head(const QString &name) { return store().kernelSource(name); }
    QByteArray blobOf(int id)
    {
        return store().repo().readBlob(experiment(id).commit, RunStore::kernelPath(experiment(id).kernel));
    }
    QByteArray workingTree(const QString &name)
    {
        return readFile(dir + QLatin1Char('/') + RunStore::kernelPath(name));
    }
    QString lastBenchKernel()
    {
        return bench.requests.isEmpty() ? QString()
                                        : QFileInfo(bench.requests.last().kernelPath).dir().dirName();
    }
    int experimentsOn(const QString &name)
    {
        int n = 0;
        for (const Experiment &e : state().experiments)
            n += e.kernel == name && e.status != ExperimentStatus::Baseline ? 1 : 0;
        return n;
    }
    bool queue(const json &request) { return RequestQueue::queue(dir, request, &error); }
};

#define CREATE_RIG(rig, config)                                                                              \
    auto rig##Holder = std::make_unique<Rig>();                                                              \
    Rig &rig = *rig##Holder;                                                                                 \
    QVERIFY2(rig.create(config), qPrintable(rig.error))

#define STEP(rig) QCOMPARE(rig.step(), ExperimentLoop::Step::Worked)

// Rules that never fire, so a test sees only what it scripts.
const json kNoRules = { { "move_on",
    { { "max_consecutive_reverts", 0 }, { "roof_pct", 0 }, { "hours_per_kernel", 0 },
        { "speedup_over_baseline", 0 } } } };

} // namespace ak::test
