// Orchestrator on hand-built RunSnapshots: which kernel comes next, in what order, and when the
// move-on rules retire a kernel. Pure functions, so every case is a snapshot and a clock.
#include "loop/orchestrator.h"
#include "runloader.h"
#include "testregistry.h"

#include <cmath>

using namespace ak;

namespace {

const QDateTime kNow = QDateTime(QDate(2026, 3, 1), QTime(12, 0), Qt::UTC);

// Builds a RunSnapshot the way the loader would: kernels in rank order, experiments in id order,
// both indexes filled, each kernel's head at its baseline until a keep moves it.
class Snapshot
{
public:
    KernelRecord &kernel(const QString &name, int rank, double share, double at90 = 1.0, double floorUs = 0,
        KernelState state = KernelState::Waiting)
    {
        KernelRecord k;
        k.rank = rank;
        k.folder = QStringLiteral("kernels/") + name;
        k.name = name;
        k.opType = QStringLiteral("softmax");
        k.share = share;
        k.modelSpeedupAt90 = at90;
        k.floorUs = floorUs;
        k.state = state;
        s.kernelIndex.insert(name, int(s.kernels.size()));
        s.kernels.push_back(k);
        return s.kernels.back();
    }

    // A measured baseline (latency NaN: not measured yet).
    Experiment &baseline(const QString &kernel, double latencyUs, double pctPeak = std::nan(""))
    {
        Experiment &e = add(kernel, ExperimentStatus::Baseline, QStringLiteral("baseline"));
        e.metrics.latencyUs = latencyUs;
        e.metrics.pctPeak = pctPeak;
        e.metrics.correct = true;
        KernelRecord &k = s.kernels[s.kernelIndex.value(kernel)];
        k.headExperiment = e.id;
        return e;
    }

    Experiment &add(const QString &kernel, ExperimentStatus status,
        const QString &agent = QStringLiteral("tune"), double latencyUs = std::nan(""))
    {
        Experiment e;
        e.id = m_nextId++;
        e.kernel = kernel;
        e.agent = agent;
        e.status = status;
        e.metrics.latencyUs = latencyUs;
        e.metrics.correct = !std::isnan(latencyUs);
        e.started = kNow.addSecs(-3600 + e.id);
        e.finished = e.started;
        s.experimentIndex.insert(e.id, int(s.experiments.size()));
        s.experiments.push_back(e);
        if (status == ExperimentStatus::Kept) // a keep (or a person's revert) moves the head
            s.kernels[s.kernelIndex.value(kernel)].headExperiment = e.id;
        if (status != ExperimentStatus::Baseline) {
            KernelRecord &k = s.kernels[s.kernelIndex.value(kernel)];
            ++k.experimentCount;
            if (k.state == KernelState::Waiting)
                k.state = KernelState::Active;
        }
        return s.experiments.back();
    }

    void setState(const QString &kernel, KernelState state)
    {
        s.kernels[s.kernelIndex.value(kernel)].state = state;
    }

    RunSnapshot s;

private:
    int m_nextId = 1;
};

MoveOnRules noRules()
{
    MoveOnRules r;
    r.maxConsecutiveReverts = 0;
    r.roofPct = 0;
    r.hoursPerKernel = 0;
    r.speedupOverBaseline = 0;
    return r;
}

} // namespace

class OrchestratorTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Every kernel has a roof: the whole-model gain at 90% of the roof decides, not share or rank.
    void amdahlOrderByGainWhenEveryKernelHasARoof()
    {
        Snapshot b;
        b.kernel(QStringLiteral("01-a"), 1, 0.50, 1.10, 5);
        b.kernel(QStringLiteral("02-b"), 2, 0.30, 1.40, 5);
        b.kernel(QStringLiteral("03-c"), 3, 0.15, 1.20, 5);
        b.kernel(QStringLiteral("04-d"), 4, 0.05, 1.20, 5); // same gain as 03-c: share decides
        QCOMPARE(Orchestrator::amdahlOrder(b.s),
            (QStringList { QStringLiteral("02-b"), QStringLiteral("03-c"), QStringLiteral("04-d"),
                QStringLiteral("01-a") }));
        QCOMPARE(Orchestrator::amdahlOrder(b.s, 2),
            (QStringList { QStringLiteral("02-b"), QStringLiteral("03-c") }));
        QCOMPARE(Orchestrator::amdahlOrder(b.s, 0).size(), 4);
        QCOMPARE(Orchestrator::amdahlOrder(b.s, 9).size(), 4);
    }

    // One kernel without a roof (floor 0; the profiler then writes model_speedup_at_90 = 1): gains are
    // not comparable, so the share of the model's time decides, then rank.
    void amdahlOrderByShareWhenARoofIsMissing()
    {
        Snapshot b;
        b.kernel(QStringLiteral("01-a"), 1, 0.20, 1.10, 5);
        b.kernel(QStringLiteral("02-b"), 2, 0.30, 1.40, 5);
        b.kernel(QStringLiteral("03-c"), 3, 0.40, 1.0, 0); // no roof
        b.kernel(QStringLiteral("04-d"), 4, 0.30, 1.30, 5); // same share as 02-b: rank decides
        QCOMPARE(Orchestrator::amdahlOrder(b.s),
            (QStringList { QStringLiteral("03-c"), QStringLiteral("02-b"), QStringLiteral("04-d"),
                QStringLiteral("01-a") }));

        // A CPU run as the profiler writes it: no floors, every gain 1.0 (and older records with 0).
        Snapshot cpu;
        cpu.kernel(QStringLiteral("01-a"), 1, 0.10, 1.0, 0);
        cpu.kernel(QStringLiteral("02-b"), 2, 0.60, 0.0, 0);
        cpu.kernel(QStringLiteral("03-c"), 3, 0.30, 1.0, 0);
        QCOMPARE(Orchestrator::amdahlOrder(cpu.s),
            (QStringList { QStringLiteral("02-b"), QStringLiteral("03-c"), QStringLiteral("01-a") }));
        QCOMPARE(Orchestrator::amdahlOrder(cpu.s, 1), QStringList { QStringLiteral("02-b") });
    }

    void amdahlOrderKeepsRetiredKernels()
    {
        Snapshot b;
        b.kernel(QStringLiteral("01-a"), 1, 0.5, 1.0, 0, KernelState::Pinned);
        b.kernel(QStringLiteral("02-b"), 2, 0.3, 1.0, 0, KernelState::Done);
        b.kernel(QStringLiteral("03-c"), 3, 0.2, 1.0, 0, KernelState::Skipped);
        QCOMPARE(Orchestrator::amdahlOrder(b.s).size(), 3);
    }

    void nextPassesPinnedSkippedDoneAndClaimed()
    {
        Snapshot b;
        b.kernel(QStringLiteral("01-a"), 1, 0.40);
        b.kernel(QStringLiteral("02-b"), 2, 0.25);
        b.kernel(QStringLiteral("03-c"), 3, 0.15);
        b.kernel(QStringLiteral("04-d"), 4, 0.10);
        b.kernel(QStringLiteral("05-e"), 5, 0.05);
        for (const QString &k : { QStringLiteral("01-a"), QStringLiteral("02-b"), QStringLiteral("03-c"),
                 QStringLiteral("04-d"), QStringLiteral("05-e") })
            b.baseline(k, 100);
        const MoveOnRules rules = noRules();
        QCOMPARE(Orchestrator::next(b.s, rules, 0, {}, kNow).kernel, QStringLiteral("01-a"));

        b.setState(QStringLiteral("01-a"), KernelState::Pinned);
        QCOMPARE(Orchestrator::next(b.s, rules, 0, {}, kNow).kernel, QStringLiteral("02-b"));
        b.setState(QStringLiteral("02-b"), KernelState::Skipped);
        QCOMPARE(Orchestrator::next(b.s, rules, 0, {}, kNow).kernel, QStringLiteral("03-c"));
        b.setState(QStringLiteral("03-c"), KernelState::Done);
        QCOMPARE(Orchestrator::next(b.s, rules, 0, {}, kNow).kernel, QStringLiteral("04-d"));
        // Another device's loop works on 04-d.
        QCOMPARE(Orchestrator::next(b.s, rules, 0, { QStringLiteral("04-d") }, kNow).kernel,
            QStringLiteral("05-e"));
        QVERIFY(Orchestrator::next(b.s, rules, 0, { QStringLiteral("04-d"), QStringLiteral("05-e") }, kNow)
                    .kernel.isEmpty());
        // Only the first four in Amdahl order: 05-e is out of reach.
        QVERIFY(Orchestrator::next(b.s, rules, 4, { QStringLiteral("04-d") }, kNow).kernel.isEmpty());
        // Active (experiments recorded) is as workable as waiting.
        b.add(QStringLiteral("04-d"), ExperimentStatus::Reverted);
        QCOMPARE(b.s.kernel(QStringLiteral("04-d"))->state, KernelState::Active);
        QCOMPARE(Orchestrator::next(b.s, rules, 0, {}, kNow).kernel, QStringLiteral("04-d"));
        // Nothing workable: no kernel, nothing retired.
        b.setState(QStringLiteral("04-d"), KernelState::Done);
        b.setState(QStringLiteral("05-e"), KernelState::Pinned);
        const Orchestrator::Choice none = Orchestrator::next(b.s, rules, 0, {}, kNow);
        QVERIFY(none.kernel.isEmpty());
        QVERIFY(none.retire.isEmpty());
    }

    // A kernel that a rule retires is reported for marking done and the next one is chosen; a kernel
    // whose baseline is not measured yet is never retired (it has no standing).
    void nextRetiresOnTheWay()
    {
        Snapshot b;
        b.kernel(QStringLiteral("01-a"), 1, 0.5);
        b.kernel(QStringLiteral("02-b"), 2, 0.3);
        b.kernel(QStringLiteral("03-c"), 3, 0.2);
        b.baseline(QStringLiteral("01-a"), 100);
        b.add(QStringLiteral("01-a"), ExperimentStatus::Kept, QStringLiteral("tune"), 40); // 2.5x
        b.baseline(QStringLiteral("02-b"), 100);
        for (int i = 0; i < 5; ++i)
            b.add(QStringLiteral("02-b"), ExperimentStatus::Reverted);
        b.baseline(QStringLiteral("03-c"), std::nan("")); // still to be measured
        for (int i = 0; i < 5; ++i)
            b.add(QStringLiteral("03-c"), ExperimentStatus::Failed);
        QVERIFY(Orchestrator::needsBaseline(b.s, QStringLiteral("03-c")));
        QVERIFY(!Orchestrator::needsBaseline(b.s, QStringLiteral("01-a")));

        const Orchestrator::Choice c = Orchestrator::next(b.s, MoveOnRules(), 0, {}, kNow);
        QCOMPARE(c.kernel, QStringLiteral("03-c"));
        QCOMPARE(c.retire.size(), 2);
        QCOMPARE(c.retire[0].first, QStringLiteral("01-a"));
        QCOMPARE(c.retire[0].second.reason, MoveOnReason::SpeedupReached);
        QVERIFY2(c.retire[0].second.explanation.contains(QStringLiteral("2.50x")),
            qPrintable(c.retire[0].second.explanation));
        QCOMPARE(c.retire[1].first, QStringLiteral("02-b"));
        QCOMPARE(c.retire[1].second.reason, MoveOnReason::ConsecutiveReverts);
        // With the rules switched off nothing is retired and Amdahl order holds.
        const Orchestrator::Choice off = Orchestrator::next(b.s, noRules(), 0, {}, kNow);
        QCOMPARE(off.kernel, QStringLiteral("01-a"));
        QVERIFY(off.retire.isEmpty());
    }

    void consecutiveRevertsCounting()
    {
        Snapshot b;
        const QString k = QStringLiteral("01-a");
        b.kernel(k, 1, 1.0);
        b.kernel(QStringLiteral("02-b"), 2, 0.5);
        b.baseline(k, 100);
        b.baseline(QStringLiteral("02-b"), 100);
        auto reverts = [&] { return Orchestrator::progress(b.s, k, kNow).consecutiveReverts; };
        QCOMPARE(reverts(), 0);
        b.add(k, ExperimentStatus::Reverted);
        b.add(k, ExperimentStatus::Failed);
        b.add(k, ExperimentStatus::Crashed);
        b.add(k, ExperimentStatus::Timeout);
        QCOMPARE(reverts(), 4);
        b.add(QStringLiteral("02-b"), ExperimentStatus::Kept, QStringLiteral("tune"),
            60); // another kernel's keep
        b.add(QStringLiteral("02-b"), ExperimentStatus::Reverted);
        QCOMPARE(reverts(), 4);
        b.add(k, ExperimentStatus::Kept, QStringLiteral("tune"), 90);
        QCOMPARE(reverts(), 0);
        b.add(k, ExperimentStatus::Reverted);
        b.add(k, ExperimentStatus::Rejected);
        QCOMPARE(reverts(), 2);
        b.add(k, ExperimentStatus::Running); // in flight: not counted either way
        QCOMPARE(reverts(), 2);
        b.add(k, ExperimentStatus::Kept, QStringLiteral("user"), 100); // a person's revert: fresh start
        QCOMPARE(reverts(), 0);
        b.add(k, ExperimentStatus::Failed);
        QCOMPARE(reverts(), 1);
        b.add(k, ExperimentStatus::Pending, QStringLiteral("tune"), 80); // a would-be keep in review mode
        QCOMPARE(reverts(), 0);
        QVERIFY(Orchestrator::isRevertLike(ExperimentStatus::Rejected));
        QVERIFY(!Orchestrator::isRevertLike(ExperimentStatus::Pending));
        QVERIFY(!Orchestrator::isRevertLike(ExperimentStatus::Baseline));

        MoveOnRules rules;
        rules.maxConsecutiveReverts = 3;
        for (int i = 0; i < 2; ++i)
            b.add(k, ExperimentStatus::Reverted);
        QCOMPARE(Orchestrator::next(b.s, rules, 0, {}, kNow).kernel, k);
        b.add(k, ExperimentStatus::Timeout);
        const Orchestrator::Choice c = Orchestrator::next(b.s, rules, 0, {}, kNow);
        QCOMPARE(c.kernel, QStringLiteral("02-b"));
        QCOMPARE(c.retire.size(), 1);
        QCOMPARE(c.retire[0].second.explanation, QStringLiteral("3 consecutive reverts"));
    }

    // Time on a kernel is its own working time (agent + benchmark of its experiments), not the wall
    // time since its first experiment: neither other kernels, nor a stopped loop, nor a person
    // taking a day to review count against it.
    void progressStartedIsNowMinusOwnWorkingTime()
    {
        Snapshot b;
        const QString k = QStringLiteral("01-a");
        b.kernel(k, 1, 1.0);
        b.kernel(QStringLiteral("02-b"), 2, 0.5);
        b.baseline(k, 100);
        QVERIFY(!Orchestrator::progress(b.s, k, kNow).started.isValid()); // not started
        QCOMPARE(Orchestrator::progress(b.s, k, kNow).now, kNow);

        const QDateTime t0 = kNow.addDays(-3); // days ago: the loop was stopped in between
        Experiment &e1 = b.add(k, ExperimentStatus::Reverted);
        e1.agentSeconds = 10;
        e1.benchSeconds = 5;
        e1.started = t0;
        e1.finished = t0.addSecs(5);
        Experiment &other = b.add(QStringLiteral("02-b"), ExperimentStatus::Reverted);
        other.agentSeconds = 1000;
        other.benchSeconds = 2000;
        other.started = t0.addSecs(10);
        other.finished = t0.addSecs(2010);
        Experiment &e2 = b.add(k, ExperimentStatus::Kept, QStringLiteral("tune"), 90);
        e2.agentSeconds = 20;
        e2.benchSeconds = 30;
        e2.started = kNow.addSecs(-60);
        e2.finished = kNow.addSecs(-30);
        Experiment &user
            = b.add(k, ExperimentStatus::Kept, QStringLiteral("user"), 100); // a person's revert: no work
        user.started = kNow.addDays(-2);
        user.finished = kNow;
        KernelProgress p = Orchestrator::progress(b.s, k, kNow);
        QCOMPARE(p.started, kNow.addSecs(-(10 + 5 + 20 + 30)));

        // Accepted a day after it was measured: `finished` moved to the accept, the work did not.
        Experiment &accepted = b.add(k, ExperimentStatus::Kept, QStringLiteral("tune"), 80);
        accepted.agentSeconds = 4;
        accepted.benchSeconds = 6;
        accepted.started = kNow.addDays(-1);
        accepted.finished = kNow;
        // Interrupted by a kill, repaired (finished) when the loop was started again two days later.
        Experiment &crashed = b.add(k, ExperimentStatus::Crashed);
        crashed.agentSeconds = 2;
        crashed.started = kNow.addDays(-2);
        crashed.finished = kNow.addSecs(-1);
        p = Orchestrator::progress(b.s, k, kNow);
        QCOMPARE(p.started, kNow.addSecs(-(65 + 10 + 2)));

        // A running experiment counts its agent time; its benchmark has no end yet.
        Experiment &running = b.add(k, ExperimentStatus::Running);
        running.agentSeconds = 7.5;
        running.started = kNow.addSecs(-2);
        running.finished = QDateTime();
        p = Orchestrator::progress(b.s, k, kNow);
        QCOMPARE(p.started, kNow.addMSecs(-(77000 + 7500)));

        // Fed to the rules: 84.5 s of work retires a kernel with a 80 s budget, not one with 90 s.
        MoveOnRules rules = noRules();
        rules.hoursPerKernel = 80.0 / 3600;
        QCOMPARE(evaluate(rules, p).reason, MoveOnReason::TimeBudget);
        rules.hoursPerKernel = 90.0 / 3600;
        QVERIFY(!evaluate(rules, p).moveOn);
    }

    void progressBestFromHeadAndBaseline()
    {
        Snapshot b;
        const QString k = QStringLiteral("01-a");
        b.kernel(k, 1, 1.0, 1.2, 3);
        b.baseline(k, 100, 40);
        KernelProgress p = Orchestrator::progress(b.s, k, kNow);
        QCOMPARE(p.bestSpeedup, 1.0);
        QCOMPARE(p.bestPctPeak, 40.0);
        Experiment &kept = b.add(k, ExperimentStatus::Kept, QStringLiteral("tune"), 25);
        kept.metrics.pctPeak = 91;
        b.add(k, ExperimentStatus::Reverted, QStringLiteral("tune"), 20); // faster but not kept: not the best
        p = Orchestrator::progress(b.s, k, kNow);
        QCOMPARE(p.bestSpeedup, 4.0);
        QCOMPARE(p.bestPctPeak, 91.0);
        QCOMPARE(evaluate(MoveOnRules(), p).reason, MoveOnReason::NearRoof);
    }

    void rulesOfReadsRunJson()
    {
        RunSnapshot s;
        QString error;
        RunLoader::setRunJson(s,
            R"({"model": "x", "move_on": {"max_consecutive_reverts": 7, "roof_pct": 80, "hours_per_kernel": 0.5, "speedup_over_baseline": 3}})",
            nullptr);
        MoveOnRules r = Orchestrator::rulesOf(s, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(r.maxConsecutiveReverts, 7);
        QCOMPARE(r.roofPct, 80.0);
        QCOMPARE(r.hoursPerKernel, 0.5);
        QCOMPARE(r.speedupOverBaseline, 3.0);

        // A partial object: the rest are the defaults.
        RunLoader::setRunJson(s, R"({"move_on": {"roof_pct": 0}})", nullptr);
        r = Orchestrator::rulesOf(s, &error);
        QVERIFY(error.isEmpty());
        MoveOnRules expected;
        expected.roofPct = 0;
        QCOMPARE(r, expected);

        // No move_on, or no run.json worth reading: the defaults, silently.
        for (const QByteArray &text :
            { QByteArray(R"({"model": "x"})"), QByteArray(), QByteArray("not json") }) {
            RunLoader::setRunJson(s, text, nullptr);
            error.clear();
            QCOMPARE(Orchestrator::rulesOf(s, &error), MoveOnRules());
            QVERIFY2(error.isEmpty(), qPrintable(error));
        }
    }

    void rulesOfReportsABadField_data()
    {
        QTest::addColumn<QByteArray>("runJson");
        QTest::addColumn<QString>("names");
        QTest::newRow("fraction") << QByteArray(
            R"({"move_on": {"roof_pct": 0.9, "max_consecutive_reverts": 9}})")
                                  << QStringLiteral("roof_pct");
        QTest::newRow("negative") << QByteArray(R"({"move_on": {"hours_per_kernel": -1}})")
                                  << QStringLiteral("hours_per_kernel");
        QTest::newRow("type") << QByteArray(R"({"move_on": {"max_consecutive_reverts": "five"}})")
                              << QStringLiteral("max_consecutive_reverts");
        QTest::newRow("unknown") << QByteArray(R"({"move_on": {"roof_percent": 80}})")
                                 << QStringLiteral("roof_percent");
        QTest::newRow("not-object") << QByteArray(R"({"move_on": 5})") << QStringLiteral("object");
    }
    void rulesOfReportsABadField()
    {
        QFETCH(QByteArray, runJson);
        QFETCH(QString, names);
        RunSnapshot s;
        RunLoader::setRunJson(s, runJson, nullptr);
        QString error;
        const MoveOnRules r = Orchestrator::rulesOf(s, &error);
        QCOMPARE(r, MoveOnRules()); // the defaults, not half of the bad object
        QVERIFY2(error.contains(QStringLiteral("run.json")), qPrintable(error));
        QVERIFY2(error.contains(names), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("defaults")), qPrintable(error));
        QCOMPARE(Orchestrator::rulesOf(s).maxConsecutiveReverts, 5); // error pointer optional
    }

    void baselineLookup()
    {
        Snapshot b;
        b.kernel(QStringLiteral("01-a"), 1, 1.0);
        b.kernel(QStringLiteral("02-b"), 2, 0.5);
        QCOMPARE(Orchestrator::baseline(b.s, QStringLiteral("01-a")), nullptr);
        QVERIFY(!Orchestrator::needsBaseline(b.s, QStringLiteral("01-a"))); // nothing to measure
        b.baseline(QStringLiteral("02-b"), std::nan(""));
        const Experiment &base = b.baseline(QStringLiteral("01-a"), 100);
        QCOMPARE(Orchestrator::baseline(b.s, QStringLiteral("01-a"))->id, base.id);
        QVERIFY(Orchestrator::needsBaseline(b.s, QStringLiteral("02-b")));
        // A baseline that failed the harness is measured again when the kernel is worked on (unskipped).
        b.s.experiments[b.s.experimentIndex.value(1)].metrics.correct = false;
        b.s.experiments[b.s.experimentIndex.value(1)].metrics.latencyUs = 5;
        QVERIFY(Orchestrator::needsBaseline(b.s, QStringLiteral("02-b")));
    }
};

AK_TEST_CLASS(OrchestratorTest)
#include "tst_orchestrator.moc"
