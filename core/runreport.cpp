#include "runreport.h"

#include "atomicfile.h"
#include "gitrepo.h"
#include "numberformat.h"
#include "runcost.h"
#include "runheadline.h"
#include "runloader.h"
#include "runstats.h"
#include "svgchart.h"
#include "textdiff.h"

#include <QCoreApplication>
#include <QMap>
#include <QSysInfo>

#include <cmath>

namespace ak {

namespace {

QString ratio(double x)
{
    return std::isfinite(x) && x > 0 ? QString::number(x, 'f', x < 10 ? 3 : 1) + QStringLiteral("×")
                                     : QStringLiteral("—");
}

QString pct(double fraction01)
{
    return QString::number(100 * fraction01, 'f', 1) + QStringLiteral(" %");
}

QString ms(double us)
{
    return std::isfinite(us) ? QString::number(us / 1000, 'f', 2) + QStringLiteral(" ms")
                             : QStringLiteral("—");
}

// "1.234× eager · 0.950× compiled": the head against both PyTorch baselines; the compiled one's note
// (not available, not measured) when it has no time.
QString speedupCell(const Metrics &m)
{
    QString s = ratio(m.speedup) + QStringLiteral(" eager");
    if (Metrics::has(m.compileSpeedup))
        s += QStringLiteral(" · ") + ratio(m.compileSpeedup) + QStringLiteral(" compiled");
    else if (!m.compileNote.isEmpty())
        s += QStringLiteral(" · compile: ") + m.compileNote;
    return s;
}

// "91.2 % (spec 81.9 %)": against the measured roof, the spec sheet's beside it.
QString roofCell(const Metrics &m)
{
    if (!Metrics::has(m.pctPeak))
        return QStringLiteral("—");
    QString s = QString::number(m.pctPeak, 'f', 1) + QStringLiteral(" %");
    if (m.roof != QLatin1String("spec") && !m.roof.isEmpty())
        s += Metrics::has(m.pctPeakSpec) ? QStringLiteral(" (spec %1 %)").arg(m.pctPeakSpec, 0, 'f', 1)
                                         : QStringLiteral(" (no spec roof)");
    else if (m.roof == QLatin1String("spec"))
        s += QStringLiteral(" (spec roof)");
    return s;
}

QString td(const QString &text, const QString &cls = QString())
{
    return cls.isEmpty() ? QStringLiteral("<td>%1</td>").arg(text.toHtmlEscaped())
                         : QStringLiteral("<td class=\"%1\">%2</td>").arg(cls, text.toHtmlEscaped());
}

// Outcome class of a point and of the summary's counts: the report colours by it (CSS below).
// The points' colours are the window's (core/experiment.h), one rule per outcome.
QString pointStyle()
{
    QString css;
    for (ExperimentOutcome o : { ExperimentOutcome::Baseline, ExperimentOutcome::Kept,
             ExperimentOutcome::Pending, ExperimentOutcome::Rejected, ExperimentOutcome::Reverted,
             ExperimentOutcome::Running, ExperimentOutcome::Failed })
        css += QStringLiteral(".pt.%1 { fill: %2; }\n").arg(outcomeName(o), QLatin1String(outcomeColor(o)));
    return css;
}

QString legendDot(ExperimentOutcome o, const QString &label)
{
    return QStringLiteral("<span><i class=\"dot\" style=\"background:%1\"></i>%2</span>")
        .arg(QLatin1String(outcomeColor(o)), label);
}

const char *const kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #1d2330; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #d8dce4; }
.sub { color: #5b6475; } .big { font-size: 28px; font-weight: 600; }
.cards { display: flex; gap: 16px; flex-wrap: wrap; } .card { border: 1px solid #d8dce4; border-radius: 6px; padding: 10px 14px; min-width: 150px; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eceef2; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.chart { background: #fff; } .chart .plot { fill: none; stroke: #c4c9d4; } .chart .grid { stroke: #eceef2; }
.chart .tick, .chart .axis, .chart .reflabel { font-size: 11px; fill: #5b6475; } .chart .title { font-size: 13px; font-weight: 600; fill: #1d2330; }
.chart .ref { stroke: #8a93a6; stroke-dasharray: 4 3; } .chart .best { fill: none; stroke: #2f7d32; stroke-width: 1.5; }
.pt { stroke: none; } .bar.gain { fill: #2f7d32; } .bar.loss { fill: #c62828; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 12px; }
pre.diff { font: 12px/1.35 ui-monospace, monospace; background: #f7f8fa; border: 1px solid #eceef2; padding: 8px; overflow-x: auto; }
.add { background: #e6f4e6; display: block; } .del { background: #fbe7e7; display: block; } .skip { color: #8a93a6; display: block; }
.legend span { margin-right: 14px; } .dot { display: inline-block; width: 9px; height: 9px; border-radius: 5px; margin-right: 4px; }
)";

} // namespace

QString RunReport::html(const RunSnapshot &run, const GitRepo *repo, const QDateTime &generated)
{
    QString h;
    h += QStringLiteral(
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>"
        "<meta charset=\"utf-8\"/><title>AutoKernel report: %1</title><style>%2</style></head><body>")
             .arg(run.config.model.toHtmlEscaped(),
                 QString(QString::fromLatin1(kStyle) + pointStyle()).toHtmlEscaped());
    h += QStringLiteral(
        "<h1>AutoKernel report: %1</h1><p class=\"sub\">%2 · %3 · generated %4 by AutoKernel Studio %5</p>")
             .arg(run.config.model.toHtmlEscaped(), run.runDir.toHtmlEscaped(),
                 (run.config.device.name.isEmpty() ? QStringLiteral("device unknown")
                                                   : run.config.device.name)
                     .toHtmlEscaped(),
                 generated.toUTC().toString(Qt::ISODate).toHtmlEscaped(),
                 QCoreApplication::applicationVersion().toHtmlEscaped());
    h += summary(run) + kernelTable(run) + charts(run) + model(run) + diffs(run, repo) + environment(run);
    h += QStringLiteral("</body></html>\n");
    return h;
}

QString RunReport::summary(const RunSnapshot &run)
{
    const RunStats stats = RunStats::of(run);
    const auto card
        = [](const QString &id, const QString &label, const QString &value, const QString &note) -> QString {
        return QStringLiteral(
            "<div class=\"card\" id=\"%1\"><div class=\"sub\">%2</div><div class=\"big\">%3</div>"
            "<div class=\"sub\">%4</div></div>")
            .arg(id, label.toHtmlEscaped(), value.toHtmlEscaped(), note.toHtmlEscaped());
    };
    QString s = QStringLiteral("<h2>Summary</h2>");
    // Three parts, never one number (#41): the starters over PyTorch, the loop on top of them, what
    // was measured in the model (RunHeadline: the window and the presentation say the same).
    const RunHeadline headline = RunHeadline::of(run);
    if (!headline.recording.isEmpty())
        s += QStringLiteral("<p id=\"recording\"><b>%1</b> · %2</p>")
                 .arg(headline.recordingLabel().toHtmlEscaped(), headline.recording.toHtmlEscaped());
    s += QStringLiteral("<div class=\"cards\">");
    s += card(QStringLiteral("starters"), QStringLiteral("Starters over PyTorch, projected"),
        headline.startersText(),
        QStringLiteral("model time with PyTorch's kernels ÷ with the starters (%1 kernel(s), Amdahl)")
            .arg(headline.startersMeasured));
    QStringList gains;
    for (const RunHeadline::LoopGain &g : headline.gains)
        gains << QStringLiteral("%1 %2").arg(g.kernel, formatSignedPercent(g.pct()));
    s += card(QStringLiteral("loop"), QStringLiteral("Loop on top, projected"), headline.loopText(),
        QStringLiteral("model time with the starters ÷ with the kept heads, each on its own latency (%1)")
            .arg(gains.isEmpty() ? QStringLiteral("nothing kept yet") : gains.join(QStringLiteral(", "))));
    const auto &v = run.verification;
    s += card(QStringLiteral("measured"), QStringLiteral("Model speedup, measured"),
        v ? ratio(v->modelSpeedup) : QStringLiteral("not verified"),
        v ? QStringLiteral("%1: eager + %2 kernel(s) ÷ eager, parity %3")
                .arg(headline.measuredText().section(QLatin1Char(' '), 1))
                .arg(v->finalSet.size())
                .arg(v->parityOk ? QStringLiteral("ok") : QStringLiteral("FAILED"))
          : QStringLiteral("nothing measured in the model; autokernel-cli verify measures it"));
    s += card(QStringLiteral("experiments"), QStringLiteral("Experiments"), QString::number(stats.attempts),
        stats.countsText());
    // What the search cost per what it found (#43 item 6): money with a price, else tokens, else time.
    if (const RunCost cost = RunCost::of(run); cost.experiments > 0)
        s += card(QStringLiteral("cost"), QStringLiteral("Cost of the search"), cost.format(cost.total()),
            cost.text());
    s += card(QStringLiteral("kernels"), QStringLiteral("Kernels"), QString::number(run.kernels.size()),
        stats.first.isValid() && stats.last.isValid()
            ? QStringLiteral("loop from %1 to %2")
                  .arg(stats.first.toUTC().toString(Qt::ISODate), stats.last.toUTC().toString(Qt::ISODate))
            : QStringLiteral("no experiment yet"));
    s += QStringLiteral("</div>");
    return s;
}

QString RunReport::kernelTable(const RunSnapshot &run)
{
    QString s = QStringLiteral(
        "<h2>Kernels, ranked by share of the model's time</h2><table id=\"kernels\"><thead><tr>"
        "<th>#</th><th>Kernel</th><th>Op</th><th>dtype</th><th>Share</th><th>Time</th>"
        "<th>Head speedup (eager · compiled PyTorch)</th><th>% of roof (measured; "
        "spec)</th><th>Experiments</th>"
        "<th>Kept</th><th>State</th>"
        "<th>In model</th></tr></thead><tbody>");
    QHash<QString, int> kept;
    for (const Experiment &e : run.experiments)
        if (e.status == ExperimentStatus::Kept)
            kept[KernelRecord::keyOf(e.kernel)] += 1;
    for (const KernelRecord &k : run.kernels) {
        const QString name = KernelRecord::keyOf(k.folder);
        const Experiment *head = run.experiment(k.headExperiment);
        QString inModel = QStringLiteral("—");
        if (run.verification) {
            if (const KernelVerification *kv = run.verification->kernel(name)) {
                inModel = std::isfinite(kv->effectPct) ? QString::asprintf("%+.2f %%", kv->effectPct)
                                                       : QStringLiteral("not measured");
                inModel += kv->inFinalSet ? QStringLiteral(", final set") : QStringLiteral(", left out");
            }
        }
        // The op as the model calls it (#38): its attributes beside the type, the refusal beside the state.
        const QString attrs = k.contract.attributesText();
        const QString op = attrs.isEmpty() ? k.opType : QStringLiteral("%1 (%2)").arg(k.opType, attrs);
        const QString state = k.state == KernelState::Unpluggable
            ? QStringLiteral("%1: %2").arg(run.stateText(k), k.stateReason)
            : run.stateText(k);
        s += QStringLiteral("<tr data-kernel=\"%1\">").arg(name.toHtmlEscaped())
            + td(QString::number(k.rank), QStringLiteral("n")) + td(name) + td(op) + td(k.dtype)
            + td(pct(k.share), QStringLiteral("n"))
            + td(QString::number(k.timeUs, 'f', 1) + QStringLiteral(" µs"), QStringLiteral("n"))
            + td(head && head->metrics.correct ? speedupCell(head->metrics) : QStringLiteral("—"),
                QStringLiteral("n"))
            + td(head ? roofCell(head->metrics) : QStringLiteral("—"), QStringLiteral("n"))
            + td(QString::number(k.experimentCount), QStringLiteral("n"))
            + td(QString::number(kept.value(name)), QStringLiteral("n")) + td(state) + td(inModel)
            + QStringLiteral("</tr>");
    }
    s += QStringLiteral("</tbody></table>");
    return s;
}

QString RunReport::charts(const RunSnapshot &run)
{
    QString timeline;
    const auto projected = RunStats::projectedTimeline(run);
    if (projected.size() > 1) {
        // Over time, as the window's Model tab draws it: the timeline is in the order heads were
        // decided, and a baseline's id is far older than its measurement, so an id axis would go back.
        QVector<QPair<QDateTime, const QPair<int, double> *>> decided;
        for (const auto &p : projected) {
            const Experiment *e = run.experiment(p.first);
            const QDateTime when = e ? RunStats::decidedAt(*e) : QDateTime();
            if (when.isValid())
                decided.append({ when, &p });
        }
        const QDateTime t0 = decided.isEmpty() ? QDateTime() : decided.first().first;
        const double spanMinutes = decided.isEmpty() ? 0 : t0.msecsTo(decided.last().first) / 60e3;
        const bool hours = spanMinutes > 5 * 60; // round ticks either way: minutes up to five hours
        SvgChart chart(1040, 240);
        chart.setTitle(QStringLiteral("Projected model speedup as the run went on"));
        chart.setAxisTitles(
            hours ? QStringLiteral("hours into the run") : QStringLiteral("minutes into the run"),
            QStringLiteral("model ×"));
        chart.setReference(1.0, QStringLiteral("the original model"));
        QVector<SvgChart::Point> line;
        for (const auto &[when, p] : decided)
            line.append({ t0.msecsTo(when) / (hours ? 3600e3 : 60e3), p->second, QStringLiteral("kept"),
                QStringLiteral("after #%1 (%2): %3")
                    .arg(p->first)
                    .arg(when.toUTC().toString(Qt::ISODate), ratio(p->second)) });
        chart.setLine(line);
        chart.setPoints(line);
        timeline = QStringLiteral("<div id=\"timeline\">%1</div>").arg(chart.toSvg());
    }
    QHash<QString, QVector<const Experiment *>> byKernel;
    for (const Experiment &e : run.experiments)
        byKernel[KernelRecord::keyOf(e.kernel)].append(&e);
    QString s = timeline
        + QStringLiteral("<h2>Speedup over PyTorch, experiment by experiment</h2><p class=\"legend\">"
                         "%1%2%3%4</p><div class=\"charts\">")
              .arg(legendDot(ExperimentOutcome::Kept, QStringLiteral("kept")),
                  legendDot(ExperimentOutcome::Reverted, QStringLiteral("reverted")),
                  legendDot(ExperimentOutcome::Pending, QStringLiteral("pending")),
                  legendDot(ExperimentOutcome::Failed, QStringLiteral("failed (no speedup: not drawn)")));
    for (const KernelRecord &k : run.kernels) {
        const QString name = KernelRecord::keyOf(k.folder);
        const auto list = byKernel.value(name);
        if (list.isEmpty())
            continue;
        SvgChart chart(520, 220);
        chart.setTitle(QStringLiteral("%1 (%2 of the model)").arg(name, pct(k.share)));
        chart.setAxisTitles(QStringLiteral("experiment"), QStringLiteral("speedup ×"));
        chart.setReference(1.0, QStringLiteral("PyTorch"));
        QVector<SvgChart::Point> points, best;
        double bestSoFar = NAN;
        for (const Experiment *e : list) {
            const double x = e->metrics.speedup;
            if (!e->metrics.correct || !Metrics::has(x))
                continue;
            points.append({ double(e->id), x, outcomeName(outcomeOf(e->status)),
                QStringLiteral("#%1 %2 %3: %4")
                    .arg(e->id)
                    .arg(statusText(e->status), ratio(x), e->description) });
            if (e->status == ExperimentStatus::Kept || e->status == ExperimentStatus::Baseline) {
                bestSoFar = std::isfinite(bestSoFar) ? std::max(bestSoFar, x) : x;
                best.append({ double(e->id), bestSoFar, QString(), QString() });
            }
        }
        if (points.isEmpty())
            continue; // nothing measured yet: no empty frame
        chart.setPoints(points);
        chart.setLine(best);
        s += QStringLiteral("<div class=\"kernelchart\" data-kernel=\"%1\">%2</div>")
                 .arg(name.toHtmlEscaped(), chart.toSvg());
    }
    s += QStringLiteral("</div>");
    return s;
}

QString RunReport::model(const RunSnapshot &run)
{
    QString s = QStringLiteral("<h2>The model, end to end</h2>");
    if (!run.verification)
        return s
            + QStringLiteral("<p id=\"model\">Not verified: <code>autokernel-cli verify %1</code> puts the "
                             "kept kernels back "
                             "into the model and measures it.</p>")
                  .arg(run.runDir.toHtmlEscaped());
    const ModelVerification &v = *run.verification;
    s += QStringLiteral("<table id=\"timings\"><thead><tr><th>Variant</th><th>Per forward</th><th>vs "
                        "eager</th><th>vs compile</th>"
                        "</tr></thead><tbody>");
    const auto row = [&](const QString &label, const ModelTiming &t) -> QString {
        return QStringLiteral("<tr>") + td(label)
            + td(t.measured ? ms(t.medianUs) : (t.error.isEmpty() ? QStringLiteral("not measured") : t.error))
            + td(t.measured ? ratio(t.speedupVsEager) : QStringLiteral("—"), QStringLiteral("n"))
            + td(t.measured && std::isfinite(t.speedupVsCompile) ? ratio(t.speedupVsCompile)
                                                                 : QStringLiteral("—"),
                QStringLiteral("n"))
            + QStringLiteral("</tr>");
    };
    s += row(QStringLiteral("eager"), v.eager) + row(QStringLiteral("eager + ours"), v.eagerOurs)
        + row(QStringLiteral("torch.compile"), v.compile)
        + row(QStringLiteral("compile + ours"), v.compileOurs);
    s += QStringLiteral("</tbody></table>");
    QStringList seeds;
    for (qint64 seed : v.seeds)
        seeds << QString::number(seed);
    s += QStringLiteral("<p>Final set: %1. Parity %2 on every output over seeds %3 (worst %4 tolerances from "
                        "the truth, eager %5).</p>")
             .arg((v.finalSet.isEmpty() ? QStringLiteral("none") : v.finalSet.join(QStringLiteral(", ")))
                      .toHtmlEscaped(),
                 v.parityOk ? QStringLiteral("ok") : QStringLiteral("FAILED"),
                 seeds.join(QStringLiteral(", ")).toHtmlEscaped(), QString::number(v.parityError, 'g', 3),
                 QString::number(v.eagerError, 'g', 3));
    QVector<QPair<QString, double>> effects;
    QString leftOut;
    for (const KernelVerification &k : v.kernels) {
        effects.append({ k.kernel, k.effectPct });
        if (!k.inFinalSet)
            leftOut += QStringLiteral("<li>%1: %2</li>")
                           .arg(k.kernel.toHtmlEscaped(),
                               (k.whyNot.isEmpty() ? QStringLiteral("left out") : k.whyNot).toHtmlEscaped());
    }
    s += QStringLiteral(
        "<h3>Each kernel's effect inside the model (leave one out)</h3><div id=\"effects\">%1</div>")
             .arg(SvgChart::bars(effects, QStringLiteral(" %"), 720));
    if (!leftOut.isEmpty())
        s += QStringLiteral("<h3>Left out</h3><ul id=\"leftout\">%1</ul>").arg(leftOut);
    // The cold re-check's distribution (#43 item 3): what "offered" rests on.
    QString rechecks;
    for (const KernelVerification &k : v.kernels)
        if (k.recheck.pairs > 0)
            rechecks += QStringLiteral(
                "<li>%1: 10th percentile %2, median %3, 90th %4 over %5 paired rounds: %6</li>")
                            .arg(k.kernel.toHtmlEscaped(), ratio(k.recheck.p10), ratio(k.recheck.median),
                                ratio(k.recheck.p90))
                            .arg(k.recheck.pairs)
                            .arg(k.recheck.offered ? QStringLiteral("offered") : QStringLiteral("withheld"));
    if (!rechecks.isEmpty())
        s += QStringLiteral("<h3>Cold re-check against PyTorch (fresh processes, paired rounds)</h3>"
                            "<ul id=\"recheck\">%1</ul>")
                 .arg(rechecks);
    return s;
}

QString RunReport::diffs(const RunSnapshot &run, const GitRepo *repo)
{
    QString s = QStringLiteral("<h2>Kept changes, each kernel's baseline against its head</h2>");
    if (!repo)
        return s + QStringLiteral("<p>The run's git history could not be opened: no diffs.</p>");
    int shown = 0;
    for (const KernelRecord &k : run.kernels) {
        const QString name = KernelRecord::keyOf(k.folder);
        const Experiment *head = run.experiment(k.headExperiment);
        const Experiment *base = nullptr;
        for (const Experiment &e : run.experiments)
            if (e.status == ExperimentStatus::Baseline && KernelRecord::keyOf(e.kernel) == name) {
                base = &e;
                break;
            }
        if (!head || !base || head == base || head->commit.isEmpty() || base->commit.isEmpty())
            continue;
        const QString path = k.folder + QStringLiteral("/kernel.py");
        QString err;
        const QString oldText = QString::fromUtf8(repo->readBlob(base->commit, path, &err));
        const QString newText
            = err.isEmpty() ? QString::fromUtf8(repo->readBlob(head->commit, path, &err)) : QString();
        s += QStringLiteral("<h3 id=\"diff-%1\">%1: experiment %2 (%3) against the baseline</h3>")
                 .arg(name.toHtmlEscaped())
                 .arg(head->id)
                 .arg(ratio(head->metrics.speedup));
        if (!err.isEmpty()) {
            s += QStringLiteral("<p>%1 cannot be read: %2</p>")
                     .arg(path.toHtmlEscaped(), err.toHtmlEscaped());
            continue;
        }
        const TextDiffResult d = TextDiff::compute(oldText, newText, 3);
        s += QStringLiteral("<pre class=\"diff\">");
        for (const DiffChunk &c : d.chunks) {
            if (c.skippedBefore > 0)
                s += QStringLiteral("<span class=\"skip\">@@ %1 unchanged line(s) @@</span>")
                         .arg(c.skippedBefore);
            for (const DiffRow &r : c.rows) {
                if (r.side[0].kind == DiffLineKind::Equal)
                    s += QStringLiteral("<span> %1</span>\n").arg(r.side[0].text.toHtmlEscaped());
                if (r.side[0].kind == DiffLineKind::Removed)
                    s += QStringLiteral("<span class=\"del\">-%1</span>").arg(r.side[0].text.toHtmlEscaped());
            }
            for (const DiffRow &r : c.rows)
                if (r.side[1].kind == DiffLineKind::Added)
                    s += QStringLiteral("<span class=\"add\">+%1</span>").arg(r.side[1].text.toHtmlEscaped());
        }
        s += QStringLiteral("</pre>");
        ++shown;
    }
    if (shown == 0)
        s += QStringLiteral("<p>No kernel has a kept change yet.</p>");
    return s;
}

QString RunReport::environment(const RunSnapshot &run)
{
    QString s = QStringLiteral("<h2>Environment</h2><table id=\"environment\"><tbody>");
    const auto row = [](const QString &k, const QString &v) -> QString {
        return QStringLiteral("<tr>") + td(k) + td(v) + QStringLiteral("</tr>");
    };
    s += row(QStringLiteral("Device"), run.config.device.summary());
    // What "% of roof" is against (docs/numbers.md): measured on the device, the spec sheet's above.
    s += row(QStringLiteral("Measured roofs"),
        run.config.device.measured.known()
            ? run.config.device.measured.summary()
            : QStringLiteral("not measured: % of roof is against the spec sheet"));
    if (run.verification) {
        const ModelVerification &v = *run.verification;
        s += row(QStringLiteral("Verified on"),
            QStringLiteral("%1 (%2), %3").arg(v.deviceName, v.device, v.dtype));
        s += row(QStringLiteral("torch / Triton / Python"),
            QStringLiteral("%1 / %2 / %3")
                .arg(v.torch, v.triton.isEmpty() ? QStringLiteral("none") : v.triton, v.python));
        s += row(QStringLiteral("Verified at"), v.when.toUTC().toString(Qt::ISODate));
    }
    s += row(QStringLiteral("Report made on"), QSysInfo::prettyProductName());
    for (const QString &w : run.warnings)
        s += row(QStringLiteral("Load warning"), w);
    s += QStringLiteral("</tbody></table>");
    return s;
}

bool RunReport::write(const QString &runDir, const QString &outFile, QString *error)
{
    const RunSnapshotPtr run = RunLoader::load(runDir, error);
    if (!run)
        return false;
    QString repoError;
    const std::unique_ptr<GitRepo> repo = GitRepo::open(runDir, &repoError);
    const QString text = html(*run, repo.get(), QDateTime::currentDateTimeUtc());
    return AtomicFile::write(outFile, text.toUtf8(), error);
}

} // namespace ak
