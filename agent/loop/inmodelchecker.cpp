#include "loop/inmodelchecker.h"

#include "loop/modelverifier.h"

namespace ak {

InModelChecker::InModelChecker(RequestFn request, InModelCheckConfig config)
    : m_request(std::move(request))
    , m_config(config)
{
    m_clock.start();
}

bool InModelChecker::due(const RunSnapshot &run, const Experiment &e, QString *why) const
{
    if (!m_request || m_config.budgetPct <= 0) {
        *why = QStringLiteral("in-model checks are off");
        return false;
    }
    if (e.status != ExperimentStatus::Kept || !e.metrics.correct) {
        *why = QStringLiteral("not a kept experiment");
        return false;
    }
    // A keep still slower than the PyTorch it replaces is no harness win: the model can only show the
    // loss (verify does not offer it either), so it does not spend the checks' share of the time.
    if (e.metrics.clearlySlowerThanTorch()) {
        *why = QStringLiteral("still slower than PyTorch in the harness (%1x)")
                   .arg(e.metrics.speedup, 0, 'f', 2);
        return false;
    }
    const KernelRecord *k = run.kernel(e.kernel);
    if (!k || k->state == KernelState::Unpluggable) {
        *why = QStringLiteral("the kernel cannot be plugged into the model");
        return false;
    }
    if (const InModelCheck *last = run.inModel.latest(e.kernel); last && last->experiment == e.id) {
        *why = QStringLiteral("already checked");
        return false;
    }
    // The first check is free; after it, a check runs only if it would leave the checks within their
    // share once it is done (its cost guessed from the last one), so the budget is not overshot by one.
    const double next = m_lastSeconds;
    const double allowed = m_config.budgetPct / 100.0 * (elapsedSeconds() + next);
    if (m_spentSeconds + next > allowed) {
        *why = QStringLiteral("in-model checks have used their %1% of the loop's time (%2 s of %3 s)")
                   .arg(m_config.budgetPct, 0, 'g', 3)
                   .arg(m_spentSeconds, 0, 'f', 1)
                   .arg(elapsedSeconds(), 0, 'f', 0);
        return false;
    }
    return true;
}

nlohmann::json InModelChecker::requestArgs(
    const RunSnapshot &run, const Experiment &e, const QString &device, QString *error) const
{
    // verify's request for this one kernel (model file, sha, dtype, the kernel's path and callable),
    // cut down: one seed, no torch.compile, no previous verification to reuse.
    VerifyOptions options;
    options.runDir = run.runDir;
    options.device = device;
    options.kernels = { e.kernel };
    options.seeds = 1;
    options.rounds = m_config.rounds;
    options.compile = false;
    options.timeoutSec = m_config.timeoutSec;
    nlohmann::json args = ModelVerifier::requestArgs(run, options, error);
    if (args.empty())
        return args;
    args.erase("previous");
    args.erase("compile");
    args["target_s"] = m_config.targetSeconds;
    if (args.value("kernels", nlohmann::json::array()).size() != 1) {
        *error = QStringLiteral("%1 is not offered to the model").arg(e.kernel);
        return {};
    }
    return args;
}

std::optional<InModelCheck> InModelChecker::check(
    const RunSnapshot &run, const Experiment &e, const QString &device, QString *error, bool *cancelled)
{
    QElapsedTimer clock;
    clock.start();
    const nlohmann::json args = requestArgs(run, e, device, error);
    if (args.empty())
        return std::nullopt;
    const WorkerReply reply = m_request(QStringLiteral("inmodel"), args, m_config.timeoutSec * 1000);
    // Charged whatever the outcome: a failing check costs the run its time too.
    m_lastSeconds = clock.elapsed() / 1000.0;
    m_spentSeconds += m_lastSeconds;
    if (cancelled)
        *cancelled = reply.status == WorkerReply::Status::Cancelled;
    if (!reply.ok()) {
        *error = reply.error.isEmpty() ? QStringLiteral("the worker did not answer") : reply.error;
        return std::nullopt;
    }
    std::optional<InModelCheck> c = InModelCheck::fromReply(reply.result, error);
    if (!c)
        return c;
    c->experiment = e.id;
    c->when = QDateTime::currentDateTimeUtc();
    c->harnessSpeedup = e.metrics.speedup;
    c->harnessWin = Metrics::has(e.metrics.speedup) && e.metrics.speedup > 1.0;
    if (const KernelRecord *k = run.kernel(e.kernel); k && k->share > 0 && c->harnessWin)
        c->expectedPct = 100.0 * k->share * (1.0 - 1.0 / e.metrics.speedup);
    c->seconds = clock.elapsed() / 1000.0; // the loop's cost, worker round trip included
    return c;
}

} // namespace ak
