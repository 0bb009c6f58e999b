#include "loop/experimentloop.h"
#include "agents/agentlog.h"

#include "agents/tunespace.h"
#include "gitrepo.h"
#include "keeprule.h"
#include "kernelstaticcheck.h"
#include "loop/orchestrator.h"
#include "loop/slurmallocation.h"
#include "looplogfile.h"
#include "runloader.h"
#include "secrets.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QThread>

#include <algorithm>
#include <cmath>

namespace ak {

// Stops the overhead clock while an agent or the harness runs.
class ExperimentLoop::OverheadClock
{
public:
    OverheadClock() { m_timer.start(); }
    void pause() { m_ms += m_timer.nsecsElapsed() / 1e6; }
    void resume() { m_timer.restart(); }
    double totalMs()
    {
        pause();
        m_timer.restart();
        return m_ms;
    }

private:
    QElapsedTimer m_timer;
    double m_ms = 0;
};

namespace {

QString speedText(double x)
{
    return std::isnan(x) ? QStringLiteral("—") : QString::number(x, 'f', 2) + QLatin1Char('x');
}

} // namespace

ExperimentLoop::ExperimentLoop(LoopSession *session, Agent *agent, BenchFn bench, ExperimentLoopConfig config)
    : m_session(session)
    , m_agent(agent)
    , m_bench(std::move(bench))
    , m_config(std::move(config))
    , m_breakerPause(qint64(m_config.breakerPauseSec) * 1000, 15 * 60 * 1000, 8)
    , m_workerPause(qint64(m_config.workerRetrySec) * 1000, 15 * 60 * 1000, 8)
    , m_writeRetry(m_config.writeRetryMs, 5 * 60 * 1000)
{ }

void ExperimentLoop::message(const QString &text) const
{
    const QString line = QStringLiteral("[%1] %2").arg(m_config.label, secrets::redact(text));
    // Also into the run, so a window watching a loop that runs elsewhere (the CLI) shows its lines.
    if (!m_session->runDir().isEmpty())
        LoopLogFile::append(m_session->runDir(), line);
    if (m_session->onMessage)
        m_session->onMessage(line);
}

void ExperimentLoop::noteSandbox(const BenchResult &bench)
{
    // Said once per loop and again whenever it changes: a run without a sandbox must not look like
    // one with (the result of every experiment records it too).
    const QString sandbox = bench.metrics.sandbox;
    if (sandbox.isEmpty() || sandbox == m_sandbox)
        return;
    m_sandbox = sandbox;
    if (sandbox.startsWith(QLatin1String("bubblewrap")))
        message(QStringLiteral("kernels run in a bubblewrap sandbox"));
    else
        message(QStringLiteral("WARNING: kernels run without a sandbox: %1").arg(sandbox));
}

ExperimentLoop::Step ExperimentLoop::run()
{
    Step s = Step::Worked;
    while (s == Step::Worked)
        s = step();
    return s;
}

BenchRequest ExperimentLoop::request(const QString &kernel, const QString &path) const
{
    BenchRequest r;
    r.kernelPath = path;
    // The folder's contract, from the run (out of the agent's reach): the judge checks the candidate
    // against the model's own call, whatever kernel.py claims.
    {
        LockedStore store = m_session->lock();
        if (const KernelRecord *k = store->state().kernel(kernel); k && !k->contract.isEmpty())
            r.extra["contract"] = k->contract.toJson();
        // Per run, from run.json (out of the agent's reach): may a precision shortcut be kept?
        if (store->state().config.allowReducedPrecision)
            r.extra["allow_reduced_precision"] = true;
    }
    r.device = m_config.benchDevice;
    r.quick = m_config.quickBench;
    r.timeLimitSec = m_config.benchTimeLimitSec;
    r.deviceInfo = m_config.device;
    return r;
}

QString ExperimentLoop::writeCandidate(const QString &kernel, const QByteArray &kernelPy, QString *error)
{
    // Outside the run directory: a candidate is not the kernel's state until it is kept.
    const QString dir = m_scratch.filePath(kernel);
    QDir().mkpath(dir);
    const QString path = dir + QStringLiteral("/kernel.py");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(kernelPy) != kernelPy.size()) {
        *error = QStringLiteral("cannot write %1: %2").arg(path, f.errorString());
        return QString();
    }
    return path;
}

ExperimentLoop::Step ExperimentLoop::step()
{
    if (!m_session->waitWhilePaused() || m_session->stopRequested())
        return Step::Stopped;
    if (m_session->budgetSpent()) {
        m_session->requestStop();
        return Step::Stopped;
    }
    OverheadClock clock;
    Claim c;
    if (!claim(&c))
        return Step::NothingLeft;
    struct Release
    {
        LoopSession *session;
        QString kernel;
        ~Release() { session->lock().claimed().remove(kernel); }
    } release { m_session, c.kernel };

    if (Orchestrator::needsBaseline(c.run, c.kernel))
        return measureBaseline(c.kernel, c.run);

    const AgentContext ctx = context(c.kernel, c.run, c.rules);
    if (ctx.kernelPy.isEmpty())
        return Step::Worked; // context() reported why; the kernel is skipped
    clock.pause();
    const AgentResult result = m_agent->propose(ctx);
    clock.resume();
    if (!result.usage().note.isEmpty())
        message(QStringLiteral("%1: %2").arg(c.kernel, result.usage().note));

    Experiment draft;
    draft.agent = result.ok() ? result.proposal().agentName : result.error().agentName;
    if (draft.agent.isEmpty())
        draft.agent = m_agent->name();
    draft.agentSeconds = result.usage().seconds;
    draft.tokensIn = result.usage().tokensIn;
    draft.tokensOut = result.usage().tokensOut;
    draft.cost = result.usage().cost;
    const QString &reply = result.ok() ? result.proposal().rawReply : result.error().rawReply;
    if (!result.ok())
        return agentFailed(c.kernel, result.error(), ctx.kernelPy.toUtf8(), draft, clock);
    m_outages = 0;
    m_breakerPause.reset();

    const AgentProposal &p = result.proposal();
    draft.description
        = p.description.isEmpty() ? QStringLiteral("(no description)") : secrets::redact(p.description);
    const QByteArray proposed = p.kernelPy.toUtf8();
    KernelStaticInfo proposedInfo;
    const QString rejected = checkProposal(ctx, proposed, &proposedInfo);
    if (!rejected.isEmpty()) {
        const QString why = QStringLiteral("static check: ") + rejected;
        const Experiment failed
            = recordFailure(c.kernel, proposed, draft, why, ExperimentStatus::Failed, reply);
        m_lastOverheadMs = clock.totalMs();
        if (failed.id != 0)
            finished(failed, why);
        return Step::Worked;
    }

    Experiment e;
    Step ended = Step::Worked;
    if (!begin(c.kernel, proposed, draft, &e, &ended))
        return ended;
    keepReply(m_session->lock().store(), e, reply);
    clock.pause();
    const BenchResult bench = benchCandidate(c.kernel, proposed);
    clock.resume();
    const BenchVerdict verdict = BenchVerdict::of(bench, c.run, c.kernel, m_session->stopRequested());
    if (verdict.environmentError && pauseForWorker(BenchVerdict::failureOf(bench))) {
        // paused with back-off; the experiment is recorded below, the kernel keeps its turn
    } else if (verdict.environmentError) {
        if (++m_environmentErrors >= 3)
            m_session->requestStop(
                QStringLiteral("the harness failed 3 times in a row: ") + BenchVerdict::failureOf(bench),
                true);
    } else if (!verdict.interrupted) {
        m_environmentErrors = 0;
        m_workerPause.reset();
    }
    Experiment recorded;
    const Step s = record(e, verdict, bench, clock, &recorded);
    if (recorded.status == ExperimentStatus::Kept) {
        if (const KernelRecord *k = c.run.kernel(c.kernel))
            rememberKeep(recorded, *k, proposedInfo, c.run.runDir);
        checkInModel(recorded);
    }
    return s;
}

void ExperimentLoop::setInModelRequest(InModelChecker::RequestFn request)
{
    m_inModel.emplace(std::move(request), m_config.inModel);
}

void ExperimentLoop::checkInModel(const Experiment &kept)
{
    if (!m_inModel || m_session->stopRequested())
        return;
    const RunSnapshot run = m_session->lock()->state(); // implicitly shared: a cheap copy
    QString why;
    if (!m_inModel->due(run, kept, &why)) {
        // Said where a person looks when the keep could have been checked (why its In model cell stays
        // as it was): slower than PyTorch, not pluggable, its share of the time used.
        if (m_config.inModel.budgetPct > 0 && kept.status == ExperimentStatus::Kept)
            message(QStringLiteral("%1: keep #%2 not checked in the model: %3")
                        .arg(kept.kernel)
                        .arg(kept.id)
                        .arg(why));
        else
            qCDebug(lcAgent) << kept.kernel << "keep" << kept.id << "not checked in the model:" << why;
        return;
    }
    message(QStringLiteral("%1: checking keep #%2 inside the model").arg(kept.kernel).arg(kept.id));
    bool cancelled = false;
    const std::optional<InModelCheck> c = m_inModel->check(run, kept, m_config.benchDevice, &why, &cancelled);
    if (!c) {
        if (!cancelled)
            message(QStringLiteral("%1: in-model check not made: %2").arg(kept.kernel, why));
        return;
    }
    QString error;
    if (!m_session->lock()->recordInModelCheck(*c, &error)) {
        message(QStringLiteral("%1: in-model check not recorded: %2").arg(kept.kernel, error));
        return;
    }
    const QString verdict = std::isnan(c->effectPct)
        ? c->why
        : QStringLiteral("%1%2% alone vs eager (noise %3%)%4")
              .arg(c->effectPct >= 0 ? QStringLiteral("+") : QString())
              .arg(c->effectPct, 0, 'f', 2)
              .arg(c->limitPct, 0, 'f', 2)
              .arg(c->positive ? QString() : QStringLiteral(": no gain in the model"));
    message(QStringLiteral("%1: in the model %2 (%3 s; checks %4 s of %5 s)")
                .arg(kept.kernel, verdict)
                .arg(c->seconds, 0, 'f', 1)
                .arg(m_inModel->spentSeconds(), 0, 'f', 1)
                .arg(m_inModel->elapsedSeconds(), 0, 'f', 0));
}

void ExperimentLoop::rememberKeep(
    const Experiment &e, const KernelRecord &kernel, const KernelStaticInfo &info, const QString &runDir)
{
    TuneMemory::Entry entry;
    const TuneSpace space = TuneSpace::fromStaticInfo(info);
    if (!info.ok || space.isEmpty() || !space.configOf(info, &entry.config))
        return;
    entry.device = m_config.device.name;
    entry.opType = kernel.opType;
    entry.dtype = kernel.dtype;
    entry.shapes = TuneMemory::shapesOf(kernel);
    entry.speedup = e.metrics.speedup;
    entry.when = QDateTime::currentDateTimeUtc();
    entry.runDir = runDir;
    QString error;
    if (!TuneMemory::remember(entry, &error))
        message(QStringLiteral("tune memory not updated: %1").arg(error));
}

bool ExperimentLoop::claim(Claim *out)
{
    LockedStore store = m_session->lock();
    QStringList errors;
    store->applyRequests(&errors);
    for (const QString &e : errors)
        message(QStringLiteral("request not applied: ") + e);
    QString rulesError;
    out->rules = Orchestrator::rulesOf(store->state(), &rulesError);
    if (!rulesError.isEmpty() && rulesError != m_rulesWarning)
        message(m_rulesWarning = rulesError);
    const Orchestrator::Choice choice = Orchestrator::next(
        store->state(), out->rules, m_config.maxKernels, store.claimed(), QDateTime::currentDateTimeUtc());
    for (const auto &[name, decision] : choice.retire) {
        QString error;
        if (store->markDone(name, decision.explanation, &error))
            message(QStringLiteral("%1: moving on (%2)").arg(name, decision.explanation));
        else
            message(QStringLiteral("%1: cannot mark done: %2").arg(name, error));
    }
    if (choice.kernel.isEmpty())
        return false;
    out->kernel = choice.kernel;
    store.claimed().insert(out->kernel);
    out->run = store->state(); // implicitly shared: a cheap copy
    return true;
}

ExperimentLoop::Step ExperimentLoop::agentFailed(const QString &kernel, const AgentError &e,
    const QByteArray &current, Experiment draft, OverheadClock &clock)
{
    switch (e.kind) {
    case AgentError::Kind::Cancelled:
        return Step::Stopped;
    case AgentError::Kind::Exhausted: {
        LockedStore store = m_session->lock();
        QString error;
        if (!store->markDone(kernel, QStringLiteral("agent has nothing left: ") + e.reason, &error)) {
            // Not marked, the kernel would be chosen (and the agent asked) again and again.
            store.unlock();
            message(QStringLiteral("%1: cannot mark done: %2").arg(kernel, error));
            return waitBeforeRetrying(error) ? Step::Worked : Step::Stopped;
        }
        message(QStringLiteral("%1: moving on (agent has nothing left: %2)").arg(kernel, e.reason));
        return Step::Worked;
    }
    case AgentError::Kind::Config:
        // Every kernel would fail alike: pause at once, charge nothing to the kernel, and let a
        // person fix the setting the reason names (DeviceLoop builds the agent again on Resume).
        m_session->pauseFor(
            QStringLiteral("agent configuration: %1 — fix it and Resume (Loop ▸ Agent… in the "
                           "window; in a CLI run, edit run.json's \"agent\": the loop "
                           "takes it up), or stop the loop")
                .arg(secrets::redact(e.reason)),
            -1);
        return Step::Reconfigure;
    default:
        draft.description = AgentError::failureDescription(e.kind);
        const Experiment failed
            = recordFailure(kernel, current, draft, e.reason, ExperimentStatus::Failed, e.rawReply);
        m_lastOverheadMs = clock.totalMs();
        if (failed.id != 0)
            finished(failed, e.reason);
        countOutage(e);
        return Step::Worked;
    }
}

bool ExperimentLoop::pauseForWorker(const QString &why)
{
    if (!m_config.remoteWorker || m_session->stopRequested())
        return false;
    // An allocation that is over does not come back however long we wait: without this, every
    // srun --jobid=N refuses and the loop pauses with back-off for ever.
    QString srunWords;
    if (const qint64 job = SlurmAllocation::endedJob(why, &srunWords)) {
        m_session->requestStop(QStringLiteral("the Slurm allocation %1 ended (srun: %2); "
                                              "`autokernel-cli run` again asks for a new one")
                                   .arg(job)
                                   .arg(srunWords),
            true);
        return true;
    }
    const int seconds = int(m_workerPause.next() / 1000);
    m_session->pauseFor(QStringLiteral("[%1] the remote worker cannot run the harness (%2): the loop pauses "
                                       "for %3 s and then starts it again; Resume tries now")
                            .arg(m_config.label, secrets::redact(why))
                            .arg(seconds),
        seconds);
    return true;
}

void ExperimentLoop::countOutage(const AgentError &e)
{
    if (!AgentError::isOutage(e.kind)) {
        m_outages = 0; // the agent answered (badly): the server is there
        return;
    }
    if (++m_outages < m_config.breakerOutages)
        return;
    // Half-open after the pause: the next outage trips the breaker again, for twice as long.
    m_outages = m_config.breakerOutages - 1;
    const int seconds = int(m_breakerPause.next() / 1000);
    m_session->pauseFor(QStringLiteral("the agent failed %1 times in a row (%2): the loop pauses for %3 s "
                                       "and then tries again; Resume tries now")
                            .arg(m_config.breakerOutages)
                            .arg(secrets::redact(e.reason))
                            .arg(seconds),
        seconds);
}

QString ExperimentLoop::checkProposal(
    const AgentContext &ctx, const QByteArray &proposed, KernelStaticInfo *info)
{
    *info = checkKernelSource(proposed);
    QString rejected = info->ok ? validateProposal(ctx.staticInfo, *info) : info->error;
    if (rejected.isEmpty() && proposed == ctx.kernelPy.toUtf8())
        rejected = QStringLiteral("the proposal is identical to the current kernel.py");
    return rejected;
}

bool ExperimentLoop::begin(
    const QString &kernel, const QByteArray &proposed, const Experiment &draft, Experiment *out, Step *ended)
{
    QString error;
    *out = m_session->lock()->beginExperiment(kernel, proposed, draft, &error);
    if (out->id != 0)
        return true;
    message(QStringLiteral("%1: proposal dropped: %2").arg(kernel, error));
    *ended = writeRefused(kernel, error) ? Step::Stopped : Step::Worked;
    return false;
}

BenchResult ExperimentLoop::benchCandidate(const QString &kernel, const QByteArray &proposed)
{
    QString error;
    const QString path = writeCandidate(kernel, proposed, &error);
    BenchResult bench;
    if (path.isEmpty()) {
        bench.failure = error;
        bench.environmentError = true;
        return bench;
    }
    bench = m_bench(request(kernel, path));
    noteSandbox(bench);
    return bench;
}

ExperimentLoop::Step ExperimentLoop::record(Experiment e, const BenchVerdict &verdict,
    const BenchResult &bench, OverheadClock &clock, Experiment *recorded)
{
    // The result is measured: it is worth waiting for (a full disk freed, say) rather than losing.
    QString error;
    for (;;) {
        {
            LockedStore store = m_session->lock();
            if (store->finishExperiment(e.id, verdict.status, bench.metrics, verdict.text, &error)) {
                e = *store->state().experiment(e.id);
                break;
            }
        }
        message(
            QStringLiteral("%1: experiment %2 could not be recorded: %3").arg(e.kernel).arg(e.id).arg(error));
        if (!waitBeforeRetrying(error))
            return Step::Stopped; // on the next open the run store repairs it as crash
    }
    m_writeRetry.reset();
    m_lastOverheadMs = clock.totalMs();
    qCDebug(lcAgent) << e.kernel << "experiment" << e.id << statusName(e.status) << "bench" << bench.seconds
                     << "s, loop overhead" << m_lastOverheadMs << "ms";
    finished(e, verdict.text);
    *recorded = e;
    return Step::Worked;
}

ExperimentLoop::Step ExperimentLoop::measureBaseline(const QString &kernel, const RunSnapshot &run)
{
    const Experiment *b = Orchestrator::baseline(run, kernel);
    QByteArray py;
    QString error;
    py = m_session->lock()->kernelSource(kernel, &error);
    const QString path = py.isEmpty() ? QString() : writeCandidate(kernel, py, &error);
    if (path.isEmpty()) {
        m_session->requestStop(
            QStringLiteral("%1: cannot read or stage kernel.py: %2").arg(kernel, error), true);
        return Step::Stopped;
    }
    message(QStringLiteral("%1: measuring the baseline").arg(kernel));
    const BenchResult bench = m_bench(request(kernel, path));
    noteSandbox(bench);
    if (m_session->stopRequested())
        return Step::Stopped;
    if (bench.environmentError) {
        if (pauseForWorker(BenchVerdict::failureOf(bench)))
            return Step::Worked; // measured again after the pause
        m_session->requestStop(
            QStringLiteral("the harness cannot run: ") + BenchVerdict::failureOf(bench), true);
        return Step::Stopped;
    }
    m_workerPause.reset();
    LockedStore store = m_session->lock();
    const bool correct = bench.status == BenchStatus::Ok && bench.correct;
    const QString failure = correct ? QString() : BenchVerdict::failureOf(bench);
    if (!store->finishExperiment(
            b->id, ExperimentStatus::Baseline, bench.metrics, failure, &error, bench.seconds)) {
        store.unlock();
        return waitBeforeRetrying(error) ? Step::Worked : Step::Stopped; // measured again next step
    }
    m_writeRetry.reset();
    if (!correct) {
        // A baseline that fails its own harness cannot be improved on; a person can unskip it later.
        store->skip(kernel, QStringLiteral("baseline fails the harness: ") + failure, &error);
        message(QStringLiteral("%1: skipped, the baseline fails the harness: %2").arg(kernel, failure));
    } else {
        message(QStringLiteral("%1: baseline %2 us (%3 vs PyTorch)")
                    .arg(kernel)
                    .arg(bench.metrics.latencyUs, 0, 'f', 2)
                    .arg(speedText(bench.metrics.speedup)));
    }
    return Step::Worked;
}

QString ExperimentLoop::proposedText(RunStore &store, const Experiment &e)
{
    auto it = m_proposedText.find(e.id);
    if (it == m_proposedText.end() && !e.commit.isEmpty())
        it = m_proposedText.insert(
            e.id, QString::fromUtf8(store.repo().readBlob(e.commit, RunStore::kernelPath(e.kernel))));
    return it == m_proposedText.end() ? QString() : *it;
}

AgentContext ExperimentLoop::context(const QString &kernel, const RunSnapshot &run, const MoveOnRules &rules)
{
    AgentContext ctx;
    const KernelRecord *k = run.kernel(kernel);
    ctx.kernelName = kernel;
    ctx.kernelDir = QDir(run.runDir).filePath(QStringLiteral("kernels/") + kernel);
    ctx.record = *k;
    ctx.opType = k->opType;
    ctx.device = m_config.device;
    if (const Experiment *head = run.experiment(k->headExperiment))
        ctx.best = head->metrics;
    LockedStore store = m_session->lock();
    QString error;
    ctx.kernelPy = QString::fromUtf8(store->kernelSource(kernel, &error));
    for (const Experiment &e : run.experiments) {
        if (e.kernel != kernel)
            continue;
        ctx.history.push_back(e);
        if (const QString text = proposedText(store.store(), e); !text.isEmpty())
            ctx.historyKernelPy.insert(e.id, text);
    }
    // Kernels of the same op type whose head is a kept improvement: what worked there, on this
    // machine, is worth a try here (the tune agent's first jumps). Best first.
    for (const KernelRecord &other : run.kernels) {
        const QString name = KernelRecord::keyOf(other.folder);
        const Experiment *head = run.experiment(other.headExperiment);
        if (name == kernel || other.opType != k->opType || !head || head->status != ExperimentStatus::Kept
            || !head->metrics.correct || !Metrics::has(head->metrics.speedup))
            continue;
        // The head's commit holds the head's kernel.py: read once, like the history's texts.
        if (const QString text = proposedText(store.store(), *head); !text.isEmpty())
            ctx.peers.push_back({ name, text, head->metrics.speedup });
    }
    std::sort(ctx.peers.begin(), ctx.peers.end(),
        [](const PeerKernel &a, const PeerKernel &b) { return a.speedup > b.speedup; });
    if (!m_memory)
        m_memory = TuneMemory::all();
    ctx.remembered = TuneMemory::select(
        *m_memory, m_config.device.name, k->opType, k->dtype, TuneMemory::shapesOf(*k), run.runDir);
    if (ctx.kernelPy.isEmpty()) {
        store->skip(kernel, QStringLiteral("kernel.py cannot be read: ") + error);
        message(QStringLiteral("%1: skipped, kernel.py cannot be read: %2").arg(kernel, error));
        return ctx;
    }
    store.unlock();
    ctx.staticInfo = checkKernelSource(ctx.kernelPy.toUtf8());
    ctx.systemPrompt = m_prompts.systemPrompt(m_config.device, *k, rules, &error);
    ctx.compactSystemPrompt
        = PromptBuilder::compact(ctx.systemPrompt, k->opType, m_config.device.vendor == QLatin1String("cpu"));
    return ctx;
}

Experiment ExperimentLoop::recordFailure(const QString &kernel, const QByteArray &kernelPy,
    const Experiment &draft, const QString &reason, ExperimentStatus status, const QString &reply)
{
    // Still a commit: the diff of a rejected proposal (or the unchanged file, for an agent error)
    // stays reviewable, and the failure counts toward the consecutive-reverts rule.
    LockedStore store = m_session->lock();
    QString error;
    Experiment e = store->beginExperiment(kernel, kernelPy, draft, &error);
    if (e.id == 0
        || !store->finishExperiment(e.id, status, Metrics(), secrets::redact(reason.simplified()), &error)) {
        store.unlock();
        message(QStringLiteral("%1: failure could not be recorded: %2").arg(kernel, error));
        writeRefused(kernel, error); // waits before the next step asks the agent again
        return Experiment();
    }
    keepReply(store.store(), e, reply);
    return *store->state().experiment(e.id);
}

void ExperimentLoop::keepReply(RunStore &store, const Experiment &e, const QString &reply)
{
    // Evidence for review beside the diff; losing it does not stop the experiment.
    QString error;
    if (!store.attachReply(e.id, reply, &error))
        message(QStringLiteral("%1: the agent's reply to experiment %2 was not kept: %3")
                    .arg(e.kernel)
                    .arg(e.id)
                    .arg(error));
}

bool ExperimentLoop::writeRefused(const QString &kernel, const QString &error)
{
    {
        // Pinned meanwhile (by a request another device's loop applied): the proposal is simply
        // not wanted, and the orchestrator passes the kernel from now on.
        LockedStore store = m_session->lock();
        const KernelRecord *k = store->state().kernel(kernel);
        if (k && k->state == KernelState::Pinned)
            return false;
    }
    return !waitBeforeRetrying(error);
}

bool ExperimentLoop::waitBeforeRetrying(const QString &error)
{
    // The run cannot be written (disk full, permissions). Asking the agent again at once would pay for
    // tokens with nothing recorded; giving up would end an overnight run over a disk a person can
    // free. So the loop waits, longer each time, and goes on when writing works again.
    const qint64 waitMs = m_writeRetry.next();
    message(QStringLiteral(
        "cannot write the run (%1); trying again in %2 s. Nothing recorded is lost; stop to end.")
                .arg(error)
                .arg(waitMs / 1000.0, 0, 'f', 1));
    QDeadlineTimer deadline(waitMs);
    while (!deadline.hasExpired()) {
        if (m_session->stopRequested())
            return false;
        QThread::msleep(std::min<qint64>(50, std::max<qint64>(1, deadline.remainingTime())));
    }
    return !m_session->stopRequested();
}

void ExperimentLoop::finished(const Experiment &e, const QString &verdict)
{
    const bool kept = e.status == ExperimentStatus::Kept || e.status == ExperimentStatus::Pending;
    const bool failed = e.status == ExperimentStatus::Failed || e.status == ExperimentStatus::Crashed
        || e.status == ExperimentStatus::Timeout;
    double best = std::nan("");
    best = Orchestrator::progress(m_session->lock()->state(), e.kernel, QDateTime::currentDateTimeUtc())
               .bestSpeedup;
    const LoopStats totals = m_session->stats();
    const QString line
        = QStringLiteral("#%1 %2 %3 %4 | best %5 vs baseline | %6 kept / %7 | %8 exp/h")
              .arg(e.id)
              .arg(e.kernel, statusName(e.status), e.description.left(60), speedText(best))
              .arg(totals.kept + (kept ? 1 : 0))
              .arg(totals.experiments + 1)
              .arg(
                  totals.elapsedSeconds > 0 ? (totals.experiments + 1) * 3600.0 / totals.elapsedSeconds : 0.0,
                  0, 'f', 0);
    m_session->count(kept, failed, m_lastOverheadMs, line);
    message(line + (verdict.isEmpty() || kept ? QString() : QStringLiteral(" — ") + verdict.left(160)));
}

} // namespace ak
