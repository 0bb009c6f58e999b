#include "agents/replayagent.h"
#include "agents/tuneagent.h"
#include "agents/tunememory.h"
#include "agents/tunepriors.h"
#include "agents/tunespace.h"
#include "kernelstaticcheck.h"
#include "loop/agentfactory.h"
#include "testregistry.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>

#include <cmath>
#include <functional>

using namespace ak;

namespace {

// Three knobs: two with TUNE_SPACE candidates, NUM_WARPS with powers of two chosen by the agent, and
// a float (EPS) that must never be touched. Deliberately mis-tuned.
const QString kKernel = QStringLiteral(
    "KERNEL_TYPE = \"softmax\"\n"
    "BLOCK_SIZE = 64  # rows per program\n"
    "NUM_WARPS = 1\n"
    "NUM_STAGES = 1\n"
    "EPS = 1e-5\n"
    "TUNE_SPACE = {\"BLOCK_SIZE\": [32, 64, 128, 256, 512, 1024, 2048, 4096], \"NUM_STAGES\": [1, 2, 3, 4]}\n"
    "\n"
    "def kernel_fn(x):\n"
    "    return x.softmax(-1)\n");

using Objective = std::function<double(const TuneConfig &)>; // latency in us, lower is better

double smooth(const TuneConfig &c)
{
    const double b = std::log2(c.value(QStringLiteral("BLOCK_SIZE")));
    const double w = std::log2(c.value(QStringLiteral("NUM_WARPS")));
    const double s = c.value(QStringLiteral("NUM_STAGES"));
    return 10 + (b - 10) * (b - 10) + 0.5 * (w - 3) * (w - 3) + 0.8 * (s - 3) * (s - 3);
}

// BLOCK_SIZE has a local optimum at the start (64) behind a hump, the global one at 2048.
double trap(const TuneConfig &c)
{
    static const QMap<int, double> byBlock { { 32, 30 }, { 64, 20 }, { 128, 25 }, { 256, 40 }, { 512, 45 },
        { 1024, 16 }, { 2048, 8 }, { 4096, 12 } };
    const double s = c.value(QStringLiteral("NUM_STAGES"));
    const double w = std::log2(c.value(QStringLiteral("NUM_WARPS")));
    return byBlock.value(int(c.value(QStringLiteral("BLOCK_SIZE"))), 99) + 0.5 * std::abs(s - 1)
        + 0.3 * std::abs(w);
}

// A stand-in for the loop: measures a proposal with the objective, keeps it when it is >1% faster.
struct Simulation
{
    Objective latency;
    QString kernelName = QStringLiteral("03-softmax");
    QString opType = QStringLiteral("softmax");
    DeviceInfo device;
    QString dtype = QStringLiteral("bf16");
    QVector<PeerKernel> peers;
    QVector<TuneMemory::Entry> remembered;
    QString best = kKernel;
    double bestSpeedup = 1;
    double reference = 0;
    QVector<Experiment> history;
    QHash<int, QString> texts;
    QStringList proposedKeys;
    QStringList descriptions;

    explicit Simulation(
        Objective f, const QString &kernel = kKernel, const QString &op = QStringLiteral("softmax"))
        : latency(std::move(f))
        , opType(op)
        , best(kernel)
    {
        const TuneConfig start = config(kernel);
        reference = latency(start);
        record(kernel, QStringLiteral("baseline"), QStringLiteral("user"), ExperimentStatus::Baseline, 1.0);
    }

    static TuneConfig config(const QString &text)
    {
        const KernelStaticInfo info = checkKernelSource(text.toUtf8());
        TuneConfig c;
        for (const TunableConstant &t : info.constants)
            c.insert(t.name, t.value);
        return c;
    }

    void record(const QString &text, const QString &description, const QString &agent,
        ExperimentStatus status, double speedup)
    {
        Experiment e;
        e.id = int(history.size()) + 1;
        e.kernel = kernelName;
        e.agent = agent;
        e.description = description;
        e.status = status;
        e.metrics.correct = true;
        e.metrics.speedup = speedup;
        history.append(e);
        texts.insert(e.id, text);
    }

    AgentContext context() const
    {
        AgentContext c;
        c.kernelName = kernelName;
        c.opType = opType;
        c.device = device;
        c.record.dtype = dtype;
        c.peers = peers;
        c.remembered = remembered;
        c.kernelPy = best;
        c.staticInfo = checkKernelSource(best.toUtf8());
        c.history = history;
        c.historyKernelPy = texts;
        c.experimentId = int(history.size()) + 1;
        return c;
    }

    // Experiments since the last keep (or the baseline) that were not kept: the default move-on rule
    // retires a kernel at 5.
    int revertsSinceKeep() const
    {
        int n = 0;
        for (auto it = history.crbegin(); it != history.crend() && it->status == ExperimentStatus::Reverted;
             ++it)
            ++n;
        return n;
    }

    // One experiment; false when the agent had nothing to propose.
    bool step(Agent &agent, AgentResult *out = nullptr)
    {
        const AgentResult r = agent.propose(context());
        if (out)
            *out = r;
        if (!r.ok())
            return false;
        const TuneConfig c = config(r.proposal().kernelPy);
        proposedKeys << TuneSpace::key(c);
        descriptions << r.proposal().description;
        const double speedup = reference / latency(c);
        const bool keep = speedup > bestSpeedup * 1.01;
        record(r.proposal().kernelPy, r.proposal().description, r.proposal().agentName,
            keep ? ExperimentStatus::Kept : ExperimentStatus::Reverted, speedup);
        if (keep) {
            best = r.proposal().kernelPy;
            bestSpeedup = speedup;
        }
        return true;
    }
};

// A matmul whose best tile (128 x 256) one constant at a time cannot reach from where greedy steps
// lead: BLOCK_M 256 helps a little, a 256 x 256 tile is terrible, and from (256, 128) no single step
// gets to (128, 256) — the H200 story of issue #15 in miniature.
const QString kMatmul
    = QStringLiteral("KERNEL_TYPE = \"matmul\"\n"
                     "BLOCK_M = 128\n"
                     "BLOCK_N = 128\n"
                     "TUNE_SPACE = {\"BLOCK_M\": [32, 64, 128, 256], \"BLOCK_N\": [32, 64, 128, 256]}\n"
                     "\n"
                     "def kernel_fn(a, b):\n"
                     "    return a @ b\n");

double tiles(const TuneConfig &c)
{
    const int m = int(c.value(QStringLiteral("BLOCK_M"))), n = int(c.value(QStringLiteral("BLOCK_N")));
    if (m == 256 && n == 256)
        return 60; // out of shared memory's sweet spot
    if (m == 128 && n == 256)
        return 8;
    if (m == 256 && n == 128)
        return 9.6;
    return 10 + (m < 128 ? 2 * (128 / m) : 0) + (n < 128 ? 2 * (128 / n) : 0);
}

DeviceInfo hopper()
{
    DeviceInfo d;
    d.available = true;
    d.vendor = QStringLiteral("nvidia");
    d.name = QStringLiteral("NVIDIA H200");
    d.computeCapability = QStringLiteral("9.0");
    return d;
}

DeviceInfo cpu()
{
    DeviceInfo d;
    d.available = true;
    d.vendor = QStringLiteral("cpu");
    return d;
}

} // namespace

class TuneAgentTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        const KernelStaticInfo info = checkKernelSource(kKernel.toUtf8());
        QVERIFY2(info.ok, qPrintable(embeddedPythonStatus() + QStringLiteral(" / ") + info.error));
    }

    void spaceFromStaticInfo()
    {
        const TuneSpace space = TuneSpace::fromStaticInfo(checkKernelSource(kKernel.toUtf8()));
        QStringList names;
        for (const TuneAxis &a : space.axes())
            names << a.name;
        QCOMPARE(names,
            QStringList(
                { QStringLiteral("BLOCK_SIZE"), QStringLiteral("NUM_WARPS"), QStringLiteral("NUM_STAGES") }));
        QCOMPARE(space.axes().at(0).values.size(), 8);
        QCOMPARE(space.axes().at(1).values,
            QVector<double>({ 1, 2, 4, 8, 16, 32 })); // powers of two, NUM_WARPS <= 32
        QCOMPARE(space.axes().at(2).values, QVector<double>({ 1, 2, 3, 4 }));
        QCOMPARE(
            TuneSpace::powersOfTwoAround(QStringLiteral("NUM_STAGES"), 4), QVector<double>({ 1, 2, 4, 8 }));
        QVERIFY(TuneSpace::powersOfTwoAround(QStringLiteral("X"), 0.5).isEmpty());
        const QVector<double> odd = TuneSpace::powersOfTwoAround(QStringLiteral("BLOCK_M"), 96);
        QVERIFY(odd.contains(96) && odd.contains(64) && odd.contains(128) && odd.first() == 1
            && odd.last() == 8192);
    }

    void improvesMisTunedKernelToOptimum()
    {
        Simulation sim(smooth);
        TuneAgent agent(7);
        const TuneConfig optimum { { QStringLiteral("BLOCK_SIZE"), 1024 }, { QStringLiteral("NUM_WARPS"), 8 },
            { QStringLiteral("NUM_STAGES"), 3 }, { QStringLiteral("EPS"), 1e-5 } };
        for (int i = 0; i < 60 && Simulation::config(sim.best) != optimum; ++i)
            QVERIFY(sim.step(agent));
        const TuneConfig best = Simulation::config(sim.best);
        QCOMPARE(best.value(QStringLiteral("BLOCK_SIZE")), 1024.0);
        QCOMPARE(best.value(QStringLiteral("NUM_WARPS")), 8.0);
        QCOMPARE(best.value(QStringLiteral("NUM_STAGES")), 3.0);
        QCOMPARE(best.value(QStringLiteral("EPS")), 1e-5); // floats without TUNE_SPACE are left alone
        // Coordinate descent needs 4 + 3 + 2 improving steps plus the probes around them.
        QVERIFY2(sim.proposedKeys.size() <= 25, qPrintable(QString::number(sim.proposedKeys.size())));
        QVERIFY(
            sim.best.contains(QStringLiteral("BLOCK_SIZE = 1024  # rows per program"))); // comments survive
        QVERIFY2(
            sim.descriptions.first().contains(QStringLiteral(" -> ")), qPrintable(sim.descriptions.first()));
    }

    void neverRepeatsAndEscapesLocalOptimum()
    {
        Simulation sim(trap);
        TuneAgent agent(3);
        int steps = 0;
        while (steps < 250 && sim.step(agent))
            ++steps;
        // It ran until the space (8 x 6 x 4 = 192, minus the start) was exhausted, never repeating.
        QCOMPARE(steps, 191);
        QSet<QString> unique(sim.proposedKeys.cbegin(), sim.proposedKeys.cend());
        QCOMPARE(unique.size(), sim.proposedKeys.size());
        QVERIFY(!unique.contains(TuneSpace::key(Simulation::config(kKernel))));
        QCOMPARE(Simulation::config(sim.best).value(QStringLiteral("BLOCK_SIZE")), 2048.0);
        QVERIFY(sim.descriptions.filter(QStringLiteral("restart: ")).size() > 0);
        // The global optimum was found well before the space ran out.
        int foundAt = -1;
        for (int i = 0; i < sim.history.size(); ++i) {
            if (sim.history.at(i).status == ExperimentStatus::Kept
                && Simulation::config(sim.texts.value(sim.history.at(i).id))
                        .value(QStringLiteral("BLOCK_SIZE"))
                    == 2048)
                foundAt = i;
        }
        QVERIFY2(foundAt > 0 && foundAt < 60, qPrintable(QString::number(foundAt)));
        AgentResult last;
        QVERIFY(!sim.step(agent, &last));
        QCOMPARE(last.error().kind, AgentError::Kind::Exhausted);
    }

    void jointMoveReachesWhatOneAtATimeCannot()
    {
        // On the CPU (no priors), greedy steps keep BLOCK_M 256 first; the joint move back to 128 with
        // BLOCK_N 256 comes before the default rule's five reverts retire the kernel.
        Simulation sim(tiles, kMatmul, QStringLiteral("matmul"));
        sim.device = cpu();
        TuneAgent agent(1);
        bool found = false;
        for (int i = 0; i < 30 && !found && sim.revertsSinceKeep() < 5; ++i) {
            QVERIFY(sim.step(agent));
            const TuneConfig best = Simulation::config(sim.best);
            found = best.value(QStringLiteral("BLOCK_M")) == 128
                && best.value(QStringLiteral("BLOCK_N")) == 256;
        }
        QVERIFY2(found, qPrintable(sim.descriptions.join(QStringLiteral(" | "))));
        // Every description says why it was proposed.
        for (const QString &d : sim.descriptions)
            QVERIFY2(QRegularExpression(QStringLiteral("^(momentum|neighbour|joint|two steps|restart): "))
                         .match(d)
                         .hasMatch(),
                qPrintable(d));
        // The path: BLOCK_M up (kept), the 256 x 256 tile and BLOCK_N down (reverted), then the joint move.
        QCOMPARE(sim.descriptions.last(), QStringLiteral("joint: BLOCK_M 256 -> 128, BLOCK_N 128 -> 256"));
        // Fewer experiments than the 15 an exhaustive sweep of the other configurations would take.
        QVERIFY2(sim.proposedKeys.size() < 15, qPrintable(QString::number(sim.proposedKeys.size())));
    }

    // A constant the kernel never reaches at its shape (NUM_STAGES here, like softmax's CHUNK for rows
    // that fit whole on the H200): once three of its values measured the same, moves of it alone stop
    // (they would measure noise, and one might be kept on it), and the descriptions say so.
    void constantsThatMakeNoDifferenceAreLeftAlone()
    {
        auto noise = [](const TuneConfig &c) {
            const double b = std::log2(c.value(QStringLiteral("BLOCK_SIZE")));
            const double w = std::log2(c.value(QStringLiteral("NUM_WARPS")));
            // ±0.5 % by NUM_STAGES: what a real bench's noise looks like, not an effect.
            const double jitter = 1 + 0.005 * std::sin(3 * c.value(QStringLiteral("NUM_STAGES")));
            return (10 + (b - 10) * (b - 10) + 0.5 * (w - 3) * (w - 3)) * jitter;
        };
        Simulation sim(noise);
        sim.device = cpu();
        TuneAgent agent(3);
        for (int i = 0; i < 40; ++i)
            if (!sim.step(agent))
                break;
        // A proposal that changed only NUM_STAGES against a configuration already measured is waste.
        int wasted = 0;
        auto withoutStages = [](TuneConfig c) {
            c.remove(QStringLiteral("NUM_STAGES"));
            return TuneSpace::key(c);
        };
        QSet<QString> measuredWithoutStages { withoutStages(Simulation::config(kKernel)) };
        for (int i = 1; i < sim.history.size(); ++i) {
            const TuneConfig c = Simulation::config(sim.texts.value(sim.history.at(i).id));
            if (measuredWithoutStages.contains(withoutStages(c)))
                ++wasted;
            measuredWithoutStages.insert(withoutStages(c));
        }
        // Learning it takes two such moves (three values); a tuner that never learns it spends one
        // move per value per point it visits.
        QVERIFY2(wasted <= 3, qPrintable(sim.descriptions.join(QStringLiteral(" | "))));
        bool said = false;
        for (const QString &d : sim.descriptions)
            said = said || d.contains(QStringLiteral("NUM_STAGES left alone: no effect measured"));
        QVERIFY2(said, qPrintable(sim.descriptions.join(QStringLiteral(" | "))));
        // The constants that matter still reach their optimum (BLOCK_SIZE 1024, NUM_WARPS 8).
        const TuneConfig best = Simulation::config(sim.best);
        QCOMPARE(best.value(QStringLiteral("BLOCK_SIZE")), 1024.0);
        QCOMPARE(best.value(QStringLiteral("NUM_WARPS")), 8.0);
    }

    // A constant that mattered somewhere is never called inert, however flat it was elsewhere.
    void aConstantThatMatteredOnceIsNotInert()
    {
        Simulation sim(smooth);
        sim.device = cpu();
        TuneAgent agent(5);
        for (int i = 0; i < 30; ++i)
            if (!sim.step(agent))
                break;
        for (const QString &d : sim.descriptions)
            QVERIFY2(!d.contains(QStringLiteral("left alone")), qPrintable(d));
    }

    void priorsComeFirstOnTheirArchitecture()
    {
        // On Hopper the shipped prior for matmul (128 x 256, measured on the H200) is the first proposal,
        // with where it comes from; it is not proposed again once tried.
        Simulation sim(tiles, kMatmul, QStringLiteral("matmul"));
        sim.device = hopper();
        TuneAgent agent(1);
        QVERIFY(sim.step(agent));
        QVERIFY2(sim.descriptions.first().startsWith(QStringLiteral("prior: BLOCK_N 128 -> 256 (")),
            qPrintable(sim.descriptions.first()));
        QVERIFY(sim.descriptions.first().contains(QStringLiteral("H200")));
        QCOMPARE(Simulation::config(sim.best).value(QStringLiteral("BLOCK_N")), 256.0); // kept
        for (int i = 0; i < 6; ++i)
            QVERIFY(sim.step(agent));
        QCOMPARE(sim.descriptions.filter(QStringLiteral("668 TFLOP/s")).size(), 1);
        // The same kernel on the CPU gets no GPU prior.
        Simulation onCpu(tiles, kMatmul, QStringLiteral("matmul"));
        onCpu.device = cpu();
        QVERIFY(onCpu.step(agent));
        QVERIFY2(!onCpu.descriptions.first().startsWith(QStringLiteral("prior")),
            qPrintable(onCpu.descriptions.first()));
    }

    void triesWhatWorkedOnAnotherKernelOfTheRun()
    {
        // 05-matmul, another matmul of the run, kept BLOCK_M 64 x BLOCK_N 256: tried here first.
        Simulation sim(tiles, kMatmul, QStringLiteral("matmul"));
        sim.device = cpu();
        QString theirs = kMatmul;
        theirs.replace(QStringLiteral("BLOCK_M = 128"), QStringLiteral("BLOCK_M = 64"))
            .replace(QStringLiteral("BLOCK_N = 128"), QStringLiteral("BLOCK_N = 256"));
        sim.peers = { PeerKernel { QStringLiteral("05-matmul"), theirs, 1.4 } };
        TuneAgent agent(1);
        QVERIFY(sim.step(agent));
        QVERIFY2(sim.descriptions.first().startsWith(
                     QStringLiteral("from 05-matmul: BLOCK_M 128 -> 64, BLOCK_N 128 -> 256")),
            qPrintable(sim.descriptions.first()));
        QVERIFY(sim.descriptions.first().contains(QStringLiteral("1.40")));
        QVERIFY(sim.step(agent));
        QVERIFY(!sim.descriptions.last().startsWith(QStringLiteral("from 05-matmul"))); // once
    }

    void tilesThatCannotFitAreNeverProposed()
    {
        // On Hopper (227 KiB per block) a bf16 tile of 256 x 256 x 128 in 4 stages (512 KiB) does not
        // compile: the search runs until nothing is left and never proposes one; on the CPU it does.
        const QString kernel
            = QStringLiteral("KERNEL_TYPE = \"matmul\"\n"
                             "BLOCK_M = 64\nBLOCK_N = 64\nBLOCK_K = 32\nNUM_STAGES = 2\n"
                             "TUNE_SPACE = {\"BLOCK_M\": [64, 128, 256], \"BLOCK_N\": [64, 128, 256], "
                             "\"BLOCK_K\": [32, 64, 128], \"NUM_STAGES\": [2, 3, 4, 5]}\n"
                             "\ndef kernel_fn(a, b):\n    return a @ b\n");
        auto smemKiB = [](const TuneConfig &c) {
            return c.value(QStringLiteral("NUM_STAGES"))
                * (c.value(QStringLiteral("BLOCK_M")) * c.value(QStringLiteral("BLOCK_K"))
                    + c.value(QStringLiteral("BLOCK_K")) * c.value(QStringLiteral("BLOCK_N")))
                * 2 / 1024;
        };
        int feasible = 0;
        for (double m : { 64, 128, 256 })
            for (double n : { 64, 128, 256 })
                for (double k : { 32, 64, 128 })
                    for (double s : { 2, 3, 4, 5 })
                        feasible
                            += smemKiB({ { QStringLiteral("BLOCK_M"), m }, { QStringLiteral("BLOCK_N"), n },
                                   { QStringLiteral("BLOCK_K"), k }, { QStringLiteral("NUM_STAGES"), s } })
                            <= 227;
        QVERIFY(feasible < 108 && feasible > 50);
        // Every constant matters a little (a flat landscape would have them all set aside as making no
        // difference, and the search would end before the space does).
        const Objective slopes = [](const TuneConfig &c) {
            return 10.0 + 0.6 * std::log2(c.value(QStringLiteral("BLOCK_M")))
                + 0.7 * std::log2(c.value(QStringLiteral("BLOCK_N")))
                + 0.8 * std::log2(c.value(QStringLiteral("BLOCK_K")))
                + 0.9 * c.value(QStringLiteral("NUM_STAGES"));
        };
        Simulation sim(slopes, kernel, QStringLiteral("matmul"));
        sim.device = hopper();
        TuneAgent agent(2);
        while (sim.step(agent)) { }
        QCOMPARE(int(sim.proposedKeys.size()), feasible - 1); // every feasible one but the start
        for (const QString &d : sim.descriptions)
            QVERIFY(!d.isEmpty());
        for (int i = 1; i < sim.history.size(); ++i)
            QVERIFY2(smemKiB(Simulation::config(sim.texts.value(sim.history.at(i).id))) <= 227,
                qPrintable(sim.history.at(i).description));
        Simulation onCpu(slopes, kernel, QStringLiteral("matmul"));
        onCpu.device = cpu();
        TuneAgent cpuAgent(2);
        while (onCpu.step(cpuAgent)) { }
        QCOMPARE(int(onCpu.proposedKeys.size()), 108 - 1);
    }

    void sharedMemoryModelMatchesWhatTritonRefused()
    {
        // Triton 3.6 on an H100 (227 KiB per block; tests/bench/starter_sweep.py, session 13): with
        // TMA the output tile is staged too, and fused_mlp's gate/up kernel holds two weight tiles.
        const double limit = TunePriors::sharedMemoryKiB(hopper());
        QCOMPARE(limit, 227.0);
        QVERIFY(TunePriors::hasTensorDescriptors(hopper()));
        QVERIFY(!TunePriors::hasTensorDescriptors(cpu()));
        auto tile = [](double m, double n, double k, double stages, double tma) {
            return TuneConfig { { QStringLiteral("BLOCK_M"), m }, { QStringLiteral("BLOCK_N"), n },
                { QStringLiteral("BLOCK_K"), k }, { QStringLiteral("NUM_STAGES"), stages },
                { QStringLiteral("TMA"), tma } };
        };
        const QString bf16 = QStringLiteral("bfloat16");
        // matmul: compiled (735 TFLOP/s) / refused, "Required: 262176".
        QVERIFY(TunePriors::fitsSharedMemory(
            tile(128, 256, 64, 3, 1), limit, bf16, QStringLiteral("matmul"), true));
        QVERIFY(!TunePriors::fitsSharedMemory(
            tile(128, 256, 64, 4, 1), limit, bf16, QStringLiteral("matmul"), true));
        // Without descriptors (an Ampere part, or TMA 0) the same 4 stages need no output tile.
        QVERIFY(TunePriors::fitsSharedMemory(
            tile(128, 256, 64, 4, 1), limit, bf16, QStringLiteral("matmul"), false));
        // fused_mlp: refused, "Required: 311352" / compiled (611 TFLOP/s).
        QVERIFY(!TunePriors::fitsSharedMemory(
            tile(128, 256, 64, 3, 1), limit, bf16, QStringLiteral("fused_mlp"), true));
        QVERIFY(TunePriors::fitsSharedMemory(
            tile(128, 128, 64, 4, 1), limit, bf16, QStringLiteral("fused_mlp"), true));
    }

    void remembersAcrossRuns()
    {
        QTemporaryDir tmp;
        const QByteArray before = qgetenv("AUTOKERNEL_TUNE_MEMORY");
        qputenv("AUTOKERNEL_TUNE_MEMORY", tmp.filePath(QStringLiteral("memory.json")).toUtf8());
        auto entry = [](const QString &shapes, double m, double n, double speedup) {
            TuneMemory::Entry e;
            e.device = QStringLiteral("NVIDIA H200");
            e.opType = QStringLiteral("matmul");
            e.dtype = QStringLiteral("bf16");
            e.shapes = shapes;
            e.config = { { QStringLiteral("BLOCK_M"), m }, { QStringLiteral("BLOCK_N"), n } };
            e.speedup = speedup;
            e.when = QDateTime::currentDateTimeUtc();
            e.runDir = QStringLiteral("/runs/earlier");
            return e;
        };
        QString error;
        QVERIFY2(TuneMemory::remember(entry(QStringLiteral("[4096, 4096]"), 64, 256, 1.2), &error),
            qPrintable(error));
        QVERIFY(TuneMemory::remember(entry(QStringLiteral("[4096, 4096]"), 32, 32, 0.9))); // worse: not kept
        QVERIFY(TuneMemory::remember(entry(QStringLiteral("[512, 512]"), 256, 64, 1.5)));
        QCOMPARE(TuneMemory::all().size(), 2); // the best per device, op, dtype and shapes
        const auto recalled = TuneMemory::recall(QStringLiteral("NVIDIA H200"), QStringLiteral("matmul"),
            QStringLiteral("bf16"), QStringLiteral("[4096, 4096]"), QStringLiteral("/runs/now"));
        QCOMPARE(recalled.size(), 2);
        QCOMPARE(recalled.first().config.value(QStringLiteral("BLOCK_M")), 64.0); // same shapes first
        QVERIFY(TuneMemory::recall(QStringLiteral("NVIDIA A100"), QStringLiteral("matmul"),
            QStringLiteral("bf16"), QString(), QString())
                    .isEmpty());
        QVERIFY(TuneMemory::recall(QStringLiteral("NVIDIA H200"), QStringLiteral("matmul"),
            QStringLiteral("bf16"), QString(), QStringLiteral("/runs/earlier"))
                    .isEmpty()); // this run's own keeps are its peers, not memories

        // The agent tries the remembered configuration first and says where it comes from.
        Simulation sim(tiles, kMatmul, QStringLiteral("matmul"));
        sim.device = cpu();
        sim.remembered = recalled;
        TuneAgent agent(1);
        QVERIFY(sim.step(agent));
        QVERIFY2(sim.descriptions.first().startsWith(
                     QStringLiteral("remembered: BLOCK_M 128 -> 64, BLOCK_N 128 -> 256")),
            qPrintable(sim.descriptions.first()));
        QVERIFY(sim.descriptions.first().contains(QStringLiteral("earlier run on NVIDIA H200")));

        // A damaged memory file costs its wrong fields, never the run: read, not thrown.
        {
            QFile damaged(tmp.filePath(QStringLiteral("memory.json")));
            QVERIFY(damaged.open(QIODevice::WriteOnly));
            damaged.write(
                R"({"entries":[{"device":"NVIDIA H200","op":"matmul","dtype":"bf16","speedup":"fast",)"
                R"("config":{"BLOCK_M":64,"BLOCK_N":"wide"}},7]})");
        }
        const QVector<TuneMemory::Entry> read = TuneMemory::all();
        QCOMPARE(read.size(), 1);
        QCOMPARE(read[0].speedup, 0.0);
        QCOMPARE(read[0].config, (TuneConfig { { QStringLiteral("BLOCK_M"), 64 } }));
        QVERIFY(TuneMemory::remember(entry(QStringLiteral("[4096, 4096]"), 64, 256, 1.2), &error));
        QCOMPARE(TuneMemory::all().size(), 2);

        QVERIFY(TuneMemory::clear(&error));
        QVERIFY(TuneMemory::all().isEmpty());
        qputenv("AUTOKERNEL_TUNE_MEMORY", "none"); // off: nothing written, nothing recalled
        QVERIFY(TuneMemory::remember(entry(QStringLiteral("x"), 64, 64, 2.0)));
        QVERIFY(TuneMemory::all().isEmpty());
        QVERIFY(!QFile::exists(tmp.filePath(QStringLiteral("memory.json"))));
        qputenv("AUTOKERNEL_TUNE_MEMORY", before);
    }

    void deterministicForSeed()
    {
        auto run = [](quint64 seed) {
            Simulation sim(trap);
            TuneAgent agent(seed);
            for (int i = 0; i < 40; ++i)
                sim.step(agent);
            return sim.proposedKeys;
        };
        QCOMPARE(run(11), run(11));
        QVERIFY(run(11) != run(12)); // restarts draw from the seed
    }

    void resumesFromHistoryAlone()
    {
        // One agent kept for the whole run versus a fresh agent (a restarted program) at every step.
        Simulation kept(trap);
        TuneAgent persistent(5);
        Simulation restarted(trap);
        for (int i = 0; i < 40; ++i) {
            kept.step(persistent);
            TuneAgent fresh(5);
            restarted.step(fresh);
        }
        QCOMPARE(restarted.proposedKeys, kept.proposedKeys);
        QCOMPARE(restarted.descriptions, kept.descriptions);
    }

    void learnsFromOtherAgentsExperiments()
    {
        Simulation sim(smooth);
        TuneAgent agent(1);
        AgentResult first;
        QVERIFY(Simulation(smooth).step(agent, &first));
        const QString natural = TuneSpace::key(Simulation::config(first.proposal().kernelPy));
        // Someone else (an LLM, a person) already tried exactly that configuration, and it failed.
        sim.record(first.proposal().kernelPy, QStringLiteral("llm tried it"), QStringLiteral("llm:x"),
            ExperimentStatus::Failed, std::nan(""));
        QVERIFY(sim.step(agent));
        QVERIFY(sim.proposedKeys.last() != natural);
    }

    void nothingToTune()
    {
        AgentContext c;
        c.kernelPy
            = QStringLiteral("KERNEL_TYPE = \"softmax\"\nEPS = 1e-5\n\ndef kernel_fn(x):\n    return x\n");
        TuneAgent agent; // staticInfo left default: the agent checks the text itself
        const AgentResult r = agent.propose(c);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().kind, AgentError::Kind::Exhausted);
        QCOMPARE(r.error().agentName, QStringLiteral("tune"));
    }

    void factoryRefusesUnusableConfigs()
    {
        QString error;
        AgentConfig c;
        c.kind = AgentConfig::Kind::Tune;
        auto tune = createAgent(c, {}, &error);
        QVERIFY(tune);
        QCOMPARE(tune->name(), QStringLiteral("tune"));
        c.kind = AgentConfig::Kind::Llm;
        QVERIFY(!createAgent(c, {}, &error));
        QVERIFY2(error.contains(QStringLiteral("no model")), qPrintable(error));
        c.model = QStringLiteral("m");
        c.baseUrl = QStringLiteral("http://127.0.0.1:9/v1"); // a local server needs no key
        auto llm = createAgent(c, {}, &error);
        QVERIFY(llm);
        QCOMPARE(llm->name(), QStringLiteral("llm:m"));
        c.kind = AgentConfig::Kind::Command;
        QVERIFY(!createAgent(c, {}, &error));
        QVERIFY(error.contains(QStringLiteral("command template")));
        c.kind = AgentConfig::Kind::Replay;
        QVERIFY(!createAgent(c, {}, &error));
        AgentInputs inputs;
        inputs.recorded = { { QStringLiteral("01-a"), QStringLiteral("x"), QStringLiteral("d"),
            QStringLiteral("tune") } };
        QVERIFY(createAgent(c, inputs, &error));
    }

    void replayInOrderAndResumes()
    {
        QVector<RecordedProposal> recorded {
            { QStringLiteral("01-a"), QStringLiteral("A1"), QStringLiteral("first a"),
                QStringLiteral("llm:m") },
            { QStringLiteral("02-b"), QStringLiteral("B1"), QStringLiteral("first b"),
                QStringLiteral("tune") },
            { QStringLiteral("01-a"), QStringLiteral("A2"), QStringLiteral("second a"),
                QStringLiteral("llm:m") },
        };
        AgentContext a;
        a.kernelName = QStringLiteral("01-a");
        ReplayAgent replay(recorded);
        AgentResult r = replay.propose(a);
        QVERIFY(r.ok());
        QCOMPARE(r.proposal().kernelPy, QStringLiteral("A1"));
        QCOMPARE(r.proposal().agentName, QStringLiteral("replay"));
        QCOMPARE(replay.propose(a).proposal().description, QStringLiteral("second a"));
        QCOMPARE(replay.propose(a).error().kind, AgentError::Kind::Exhausted);

        // A new process: the history says one replay experiment of 01-a was recorded.
        ReplayAgent resumed(recorded);
        Experiment done;
        done.kernel = QStringLiteral("01-a");
        done.agent = QStringLiteral("replay");
        a.history = { done };
        QCOMPARE(resumed.propose(a).proposal().kernelPy, QStringLiteral("A2"));
    }
};

AK_TEST_CLASS(TuneAgentTest)
#include "tst_tuneagent.moc"
