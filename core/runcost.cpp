#include "runcost.h"

#include <QSet>

namespace ak {

double RunCost::total() const
{
    switch (unit()) {
    case Unit::Money:
        return money;
    case Unit::Tokens:
        return double(tokens);
    case Unit::Time:
        break;
    }
    return seconds;
}

RunCost RunCost::of(const RunSnapshot &run)
{
    RunCost c;
    QSet<QString> kept;
    for (const Experiment &e : run.experiments) {
        c.tokens += e.tokensIn + e.tokensOut;
        c.money += e.cost;
        c.seconds += e.agentSeconds + e.benchSeconds;
        const ExperimentOutcome o = outcomeOf(e.status);
        if (o == ExperimentOutcome::Baseline)
            continue;
        ++c.experiments;
        if (o == ExperimentOutcome::Kept || o == ExperimentOutcome::Pending)
            kept.insert(KernelRecord::keyOf(e.kernel));
    }
    c.keptKernels = int(kept.size());
    // What the user gets is the model's speedup: measured when verified, else projected from the heads.
    c.measured = run.verification && std::isfinite(run.verification->modelSpeedup);
    const double speedup = c.measured ? run.verification->modelSpeedup : run.projectedSpeedup();
    c.speedupPoints = std::isfinite(speedup) ? (speedup - 1.0) * 100.0 : std::nan("");
    return c;
}

QString RunCost::format(double value) const
{
    if (!std::isfinite(value))
        return QStringLiteral("—");
    switch (unit()) {
    case Unit::Money:
        return QStringLiteral("$%1").arg(value, 0, 'f', value < 0.1 ? 4 : 2);
    case Unit::Tokens:
        return value >= 10000 ? QStringLiteral("%1k tokens").arg(value / 1000.0, 0, 'f', 1)
                              : QStringLiteral("%1 tokens").arg(std::llround(value));
    case Unit::Time:
        break;
    }
    if (value < 120)
        return QStringLiteral("%1 s").arg(value, 0, 'f', 0);
    return value < 7200 ? QStringLiteral("%1 min").arg(value / 60.0, 0, 'f', 1)
                        : QStringLiteral("%1 h").arg(value / 3600.0, 0, 'f', 1);
}

QString RunCost::text() const
{
    if (experiments == 0)
        return {};
    QString t = QStringLiteral("%1/experiment").arg(format(perExperiment()));
    t += keptKernels > 0 ? QStringLiteral(" · %1/kept kernel").arg(format(perKeptKernel()))
                         : QStringLiteral(" · no kernel kept");
    t += speedupPoints > 0
        ? QStringLiteral(" · %1/point of model speedup (%2)")
              .arg(format(perPoint()), measured ? QStringLiteral("measured") : QStringLiteral("projected"))
        : QStringLiteral(" · no model speedup yet");
    if (unit() == Unit::Tokens)
        t += QStringLiteral(" (no price set for the agent's model)");
    else if (unit() == Unit::Time)
        t += QStringLiteral(" (agent and bench time)");
    return t;
}

} // namespace ak
