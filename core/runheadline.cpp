#include "runheadline.h"

#include "numberformat.h"

#include <QCoreApplication>

#include <algorithm>

namespace ak {

namespace {

// A kernel's time relative to PyTorch's own once plugged: a part slower than PyTorch is left out
// (verify does not offer it), so it never counts as more than PyTorch's time.
double pluggedPart(double relative)
{
    return std::isfinite(relative) && relative > 0 ? std::min(1.0, relative) : 1.0;
}

bool measuredOk(const Experiment &e)
{
    return e.metrics.correct && Metrics::has(e.metrics.speedup) && e.metrics.speedup > 0;
}

} // namespace

const Experiment *RunHeadline::baselineOf(const RunSnapshot &run, const QString &kernel)
{
    // The newest one: a re-baseline (a new starter) replaces the start, as the kernel table takes it.
    for (auto it = run.experiments.crbegin(); it != run.experiments.crend(); ++it)
        if (it->kernel == kernel && it->status == ExperimentStatus::Baseline && measuredOk(*it))
            return &*it;
    return nullptr;
}

RunHeadline RunHeadline::of(const RunSnapshot &run)
{
    RunHeadline h;
    double startersTime = 1.0; // the model's time as a fraction of PyTorch's own
    double headsTime = 1.0;
    for (const KernelRecord &k : run.kernels) {
        const Experiment *base = baselineOf(run, k.key());
        if (!base || k.share <= 0)
            continue;
        ++h.startersMeasured;
        const double starterPart = 1.0 / base->metrics.speedup;
        double ownRatio = 1.0; // head latency ÷ baseline latency
        const Experiment *head = run.experiment(k.headExperiment);
        if (head && head->id != base->id && head->status == ExperimentStatus::Kept && head->metrics.correct
            && head->metrics.latencyUs > 0 && base->metrics.latencyUs > 0) {
            ownRatio = head->metrics.latencyUs / base->metrics.latencyUs;
            h.gains.append({ k.key(), base->id, head->id, base->metrics.latencyUs, head->metrics.latencyUs });
        }
        startersTime -= k.share * (1.0 - pluggedPart(starterPart));
        headsTime -= k.share * (1.0 - pluggedPart(starterPart * ownRatio));
    }
    if (h.startersMeasured > 0 && startersTime > 0 && headsTime > 0) {
        h.starters = 1.0 / startersTime;
        h.loopPct = (startersTime / headsTime - 1.0) * 100.0;
    }
    if (run.verification && std::isfinite(run.verification->modelSpeedup)) {
        h.verified = true;
        h.measured = run.verification->modelSpeedup;
        h.measuredWhen = run.verification->when;
        h.measuredDevice = run.verification->deviceName.isEmpty() ? run.verification->device
                                                                  : run.verification->deviceName;
        h.finalSetSize = int(run.verification->finalSet.size());
        h.parityOk = run.verification->parityOk;
    }
    h.recording = run.recording;
    return h;
}

QString RunHeadline::startersText() const
{
    return formatRatio(starters);
}

QString RunHeadline::loopText() const
{
    return formatSignedPercent(loopPct);
}

QString RunHeadline::measuredWhere() const
{
    QStringList parts;
    if (measuredWhen.isValid())
        parts << measuredWhen.toUTC().toString(Qt::ISODate).left(10);
    if (!measuredDevice.isEmpty())
        parts << QCoreApplication::translate("ak::RunHeadline", "on %1").arg(measuredDevice);
    return parts.join(QLatin1Char(' '));
}

QString RunHeadline::measuredText() const
{
    if (!verified)
        return QCoreApplication::translate("ak::RunHeadline", "not verified");
    QString text = QCoreApplication::translate("ak::RunHeadline", "%1 measured").arg(formatRatio(measured));
    const QString where = measuredWhere();
    if (!where.isEmpty())
        text += QLatin1Char(' ') + where;
    if (!parityOk)
        text += QCoreApplication::translate("ak::RunHeadline", " (parity FAILED)");
    return text;
}

QString RunHeadline::text() const
{
    return QCoreApplication::translate("ak::RunHeadline", "starters %1 · loop %2 · model %3")
        .arg(startersText(), loopText(), measuredText());
}

QString RunHeadline::recordingLabel() const
{
    if (recording.isEmpty())
        return {};
    // No date or device: the headline's model part beside it already says where it was measured (at
    // 1280 px the two together wrapped the window's summary to four lines).
    return verified ? QCoreApplication::translate("ak::RunHeadline", "Recording · verified")
                    : QCoreApplication::translate("ak::RunHeadline", "Recording · not verified in the model");
}

QString RunHeadline::explanation() const
{
    QStringList lines;
    lines << QCoreApplication::translate("ak::RunHeadline",
        "Starters %1: projected model time with PyTorch's kernels ÷ with the starter kernels (Amdahl over "
        "each kernel's share, each baseline's paired speedup over PyTorch; %2 kernel(s) measured). What "
        "the starters give before the loop tries anything.")
                 .arg(startersText())
                 .arg(startersMeasured);
    lines << QCoreApplication::translate("ak::RunHeadline",
        "Loop %1: projected model time with the starters ÷ with the kept heads, each head timed against "
        "its own baseline (latency ÷ latency: what the keep rule compares).")
                 .arg(loopText());
    for (const LoopGain &g : gains)
        lines << QCoreApplication::translate("ak::RunHeadline", "  %1: %2 → %3 (#%4 → #%5), %6")
                     .arg(g.kernel, formatMicros(g.baselineUs), formatMicros(g.headUs))
                     .arg(g.baseline)
                     .arg(g.head)
                     .arg(formatSignedPercent(g.pct()));
    if (gains.isEmpty())
        lines << QCoreApplication::translate("ak::RunHeadline", "  no kernel kept a change yet");
    if (verified)
        lines << QCoreApplication::translate("ak::RunHeadline",
            "Model %1: measured by verify, eager + the final set (%2 kernel(s)) ÷ eager, in the model "
            "itself.")
                     .arg(measuredText())
                     .arg(finalSetSize);
    else
        lines << QCoreApplication::translate("ak::RunHeadline",
            "Model not verified: nothing was measured in the model; Model ▸ Verify (autokernel-cli "
            "verify) measures it. The two numbers above are projections.");
    if (!recording.isEmpty())
        lines << QCoreApplication::translate("ak::RunHeadline", "A recording shipped with the app: %1.")
                     .arg(recording);
    return lines.join(QLatin1Char('\n'));
}

} // namespace ak
