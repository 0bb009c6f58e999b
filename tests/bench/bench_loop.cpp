// bench_loop: the loop's own cost per experiment (orchestrator, static check, commit, log append +
// fsync, context building, notifications) with an agent and a harness that take no time, so what is
// measured is exactly ExperimentLoop::lastOverheadMs. Target (issue [agent-loop]): median <= 200 ms.
// Usage: bench_loop [--kernels 50] [--history 10000] [--experiments 200]
// The history is written first (no fsync, like autokernel-gen-run); the measured experiments fsync.
#include "agents/agent.h"
#include "atomicfile.h"
#include "loop/experimentloop.h"
#include "loop/loopsession.h"
#include "runstore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>

using namespace ak;

namespace {

// Proposes the current kernel.py with one constant changed, instantly.
class InstantAgent : public Agent
{
public:
    QString name() const override { return QStringLiteral("bench"); }
    AgentResult propose(const AgentContext &c) override
    {
        AgentProposal p;
        p.kernelPy = c.kernelPy + QStringLiteral("\n# variant %1\n").arg(++m_n);
        p.description = QStringLiteral("variant %1").arg(m_n);
        p.agentName = name();
        return AgentResult::success(p);
    }

private:
    int m_n = 0;
};

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser p;
    p.addOption(
        { QStringLiteral("kernels"), QStringLiteral("kernels"), QStringLiteral("n"), QStringLiteral("50") });
    p.addOption({ QStringLiteral("history"), QStringLiteral("experiments already in the run"),
        QStringLiteral("n"), QStringLiteral("10000") });
    p.addOption({ QStringLiteral("experiments"), QStringLiteral("experiments to measure"),
        QStringLiteral("n"), QStringLiteral("200") });
    p.process(app);
    const int kernels = p.value(QStringLiteral("kernels")).toInt();
    const int history = p.value(QStringLiteral("history")).toInt();
    const int measured = p.value(QStringLiteral("experiments")).toInt();
    QTextStream out(stdout);

    QFile starter(QStringLiteral(AUTOKERNEL_SOURCE_DIR "/agent/python/harness/starters/cpu/softmax.py"));
    if (!starter.open(QIODevice::ReadOnly)) {
        out << "cannot read " << starter.fileName() << '\n';
        return 1;
    }
    const QByteArray kernelPy = starter.readAll();
    QTemporaryDir dir;
    QString error;
    AtomicFile::setSyncEnabled(false);
    auto store = RunStore::create(dir.path(),
        nlohmann::json { { "model", "bench" },
            { "move_on",
                { { "max_consecutive_reverts", 0 }, { "hours_per_kernel", 0 }, { "speedup_over_baseline", 0 },
                    { "roof_pct", 0 } } } },
        &error);
    if (!store) {
        out << error << '\n';
        return 1;
    }
    QStringList names;
    for (int i = 0; i < kernels; ++i) {
        KernelRecord k;
        k.rank = i + 1;
        k.opType = QStringLiteral("softmax");
        k.name = QStringLiteral("softmax_%1").arg(i);
        k.share = 1.0 / (i + 2);
        const Experiment base = store->addKernel(k, kernelPy, &error);
        Metrics m;
        m.latencyUs = 100;
        m.correct = true;
        store->finishExperiment(base.id, ExperimentStatus::Baseline, m, QString(), &error);
        names << base.kernel;
    }
    QRandomGenerator rng(1);
    for (int n = 0; n < history; ++n) {
        const QString k = names[int(rng.bounded(kernels))];
        const Experiment e
            = store->beginExperiment(k, kernelPy + "\n# history " + QByteArray::number(n) + '\n',
                QStringLiteral("tune"), QStringLiteral("history %1").arg(n), &error);
        Metrics m;
        m.latencyUs = 100 + rng.bounded(10.0);
        m.correct = true;
        store->finishExperiment(e.id, ExperimentStatus::Reverted, m, QStringLiteral("slower"), &error);
    }
    AtomicFile::setSyncEnabled(true);

    LoopSession session(std::move(store));
    InstantAgent agent;
    ExperimentLoop::BenchFn bench = [&rng](const BenchRequest &) {
        BenchResult r;
        r.status = BenchStatus::Ok;
        r.correct = true;
        r.metrics.correct = true;
        r.metrics.latencyUs = 90 + rng.bounded(20.0);
        r.metrics.noisePct = 0.5;
        return r;
    };
    ExperimentLoop loop(&session, &agent, bench, ExperimentLoopConfig());
    QVector<double> ms;
    while (ms.size() < measured) {
        if (loop.step() != ExperimentLoop::Step::Worked)
            break;
        if (session.stats().experiments > ms.size())
            ms << loop.lastOverheadMs();
    }
    std::sort(ms.begin(), ms.end());
    if (ms.isEmpty()) {
        out << "no experiment ran\n";
        return 1;
    }
    auto pct = [&ms](double q) { return ms[std::min(int(ms.size()) - 1, int(q * ms.size()))]; };
    out << QStringLiteral(
        "kernels %1, history %2: %3 experiments, loop overhead median %4 ms, p90 %5 ms, max %6 ms\n")
               .arg(kernels)
               .arg(history)
               .arg(ms.size())
               .arg(pct(0.5), 0, 'f', 1)
               .arg(pct(0.9), 0, 'f', 1)
               .arg(ms.last(), 0, 'f', 1);
    return 0;
}
