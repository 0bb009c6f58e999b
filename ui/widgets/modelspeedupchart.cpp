#include "widgets/modelspeedupchart.h"

#include "models/outcomecolors.h"
#include "numberformat.h"
#include "runsnapshot.h"
#include "runstats.h"
#include "widgets/chartpanel.h"
#include "widgets/emptystate.h"

#include <QChart>
#include <QChartView>
#include <QDateTimeAxis>
#include <QEvent>
#include <QFontMetrics>
#include <QGraphicsLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QStackedLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace ak {

ModelSpeedupChart::ModelSpeedupChart(QWidget *parent)
    : ChartPanel(parent)
    , m_projected(new QLineSeries(this))
    , m_measured(new QLineSeries(this))
    , m_original(new QLineSeries(this))
    , m_x(new QDateTimeAxis(this))
    , m_y(new QValueAxis(this))
{
    setObjectName(QStringLiteral("ModelSpeedupChart"));
    chartView()->setToolTip(tr("The whole model's projected speedup as the run went on: each kernel's share "
                               "of the model's time sped up by its best kept version (Amdahl). The dashed "
                               "line is the speedup Verify measured end to end."));
    m_projected->setName(tr("projected"));
    m_original->setName(tr("original model"));
    recolour();
    for (QLineSeries *s : { m_original, m_measured, m_projected })
        chart()->addSeries(s);
    m_x->setTitleText(tr("time"));
    m_y->setTitleText(tr("model speedup ×"));
    m_y->setLabelFormat(QStringLiteral("%.2f"));
    chart()->addAxis(m_x, Qt::AlignBottom);
    chart()->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries *s : chart()->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    finishSetup();
    clear();
}

void ModelSpeedupChart::recolour()
{
    const QColor base = palette().color(QPalette::Base);
    auto pen = [&base](const QColor &wanted, qreal width, Qt::PenStyle style) {
        QPen p(OutcomeColors::readableOn(wanted, base, OutcomeColors::kGraphicContrast));
        p.setWidthF(width);
        p.setStyle(style);
        return p;
    };
    m_projected->setPen(pen(QColor(0x1b, 0x7f, 0x3b), 2.5, Qt::SolidLine));
    m_measured->setPen(pen(QColor(0x1c, 0x71, 0xd8), 2, Qt::DashLine));
    m_original->setPen(pen(QColor(0x80, 0x80, 0x80), 1, Qt::DotLine));
}

void ModelSpeedupChart::changeEvent(QEvent *event)
{
    ChartPanel::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        recolour();
}

void ModelSpeedupChart::clear()
{
    m_timeline.clear();
    for (QLineSeries *s : { m_projected, m_measured, m_original })
        s->clear();
    setEmptyText(tr("No projection yet"),
        tr("The whole model's projected speedup appears here, over time, once the loop has measured "
           "the kernels' baselines."));
    showEmpty();
}

void ModelSpeedupChart::setSnapshot(const RunSnapshot &run)
{
    const QVector<QPair<int, double>> timeline = RunStats::projectedTimeline(run);
    if (timeline.isEmpty()) {
        clear();
        return;
    }
    m_timeline = timeline;
    // A step line: a projection holds until the next head moves, then jumps. The timeline is in the
    // order heads were decided (RunStats::decidedAt), so x never goes back.
    QList<QPointF> points;
    double last = NAN;
    double low = 1.0, high = 1.0;
    for (const auto &[id, speedup] : timeline) {
        const Experiment *e = run.experiment(id);
        const QDateTime when = e ? RunStats::decidedAt(*e) : QDateTime();
        if (!when.isValid())
            continue;
        const double x = double(when.toMSecsSinceEpoch());
        if (!std::isnan(last))
            points.append({ x, last });
        points.append({ x, speedup });
        last = speedup;
        low = std::min(low, speedup);
        high = std::max(high, speedup);
    }
    if (points.isEmpty()) {
        clear();
        return;
    }
    // To the newest experiment's time: the projection stands as of now, not as of the last keep.
    double end = points.last().x();
    for (const Experiment &e : run.experiments) {
        const QDateTime when = RunStats::decidedAt(e);
        if (when.isValid())
            end = std::max(end, double(when.toMSecsSinceEpoch()));
    }
    const double begin = points.first().x();
    if (end <= begin)
        end = begin + 60'000; // one minute, so that a single point still has a line to sit on
    points.append({ end, last });
    m_projected->replace(points);
    m_projectedRatio = formatRatio(last);
    m_projected->setName(tr("projected %1").arg(m_projectedRatio));
    m_original->replace(QList<QPointF> { { begin, 1.0 }, { end, 1.0 } });

    if (run.verification && std::isfinite(run.verification->modelSpeedup)) {
        const double measured = run.verification->modelSpeedup;
        m_measured->replace(QList<QPointF> { { begin, measured }, { end, measured } });
        m_measuredRatio = formatRatio(measured);
        m_measured->setName(tr("measured %1 (Verify)").arg(m_measuredRatio));
        low = std::min(low, measured);
        high = std::max(high, measured);
    } else {
        m_measured->clear();
    }
    for (QLegendMarker *marker : chart()->legend()->markers(m_measured))
        marker->setVisible(m_measured->count() > 0);
    fitLegend();

    m_x->setRange(QDateTime::fromMSecsSinceEpoch(qint64(begin)), QDateTime::fromMSecsSinceEpoch(qint64(end)));
    // Ticks that differ: seconds for a short run (six ticks over three minutes would repeat minutes),
    // the day for one that crosses midnight overnight.
    const double hours = (end - begin) / 3600e3;
    m_x->setFormat(hours < 1 ? QStringLiteral("HH:mm:ss")
            : hours < 20     ? QStringLiteral("HH:mm")
                             : QStringLiteral("ddd HH:mm"));
    fitTicks();
    // The range of the data with a margin, so that a 2 % gain is visible, and 1.0 always in view.
    const double pad = std::max(0.02, 0.1 * (high - low));
    m_y->setRange(std::max(0.0, low - pad), high + pad);
    showChart();
}

void ModelSpeedupChart::resizeEvent(QResizeEvent *event)
{
    ChartPanel::resizeEvent(event);
    fitTicks();
    fitLegend();
}

void ModelSpeedupChart::fitLegend()
{
    QLegend *legend = chart()->legend();
    const QFontMetrics metrics(legend->font());
    struct Labels
    {
        QLineSeries *series;
        QStringList tiers; // longest first
    };
    const QVector<Labels> all = {
        { m_original, { m_original->name(), tr("original"), tr("original") } },
        { m_measured, { m_measured->name(), tr("measured %1").arg(m_measuredRatio), tr("measured") } },
        { m_projected, { m_projected->name(), m_projected->name(), tr("projected") } },
    };
    // Each entry takes its label, a marker about a line high and the gaps around them; the chart's
    // margins take the rest. The panel's width, not the view's: in a resize event the view has not
    // been laid out yet.
    const int room = width() - 40;
    int tier = 0;
    for (; tier < 2; ++tier) {
        int need = 0;
        for (const Labels &l : all) {
            const QList<QLegendMarker *> markers = legend->markers(l.series);
            if (!markers.isEmpty() && markers.first()->isVisible())
                need += metrics.horizontalAdvance(l.tiers[tier]) + 2 * metrics.height() + 12;
        }
        if (need <= room)
            break;
    }
    bool changed = false;
    for (const Labels &l : all) {
        for (QLegendMarker *marker : legend->markers(l.series)) {
            changed = changed || marker->label() != l.tiers[tier];
            marker->setLabel(l.tiers[tier]);
        }
    }
    // The legend was laid out (and its labels cut) when the view was resized, before this panel's
    // resize event: lay it out again with the new labels.
    if (changed && legend->layout()) {
        legend->layout()->invalidate();
        legend->layout()->activate();
    }
}

void ModelSpeedupChart::fitTicks()
{
    // The widest label of the current format, plus a gap; the value axis and margins take about
    // 80 px of the panel's width.
    const QString sample = QDateTime(QDate(2026, 12, 30), QTime(23, 58, 58)).toString(m_x->format());
    const int label = QFontMetrics(m_x->labelsFont()).horizontalAdvance(sample) + 16;
    const int room = std::max(0, width() - 80);
    m_x->setTickCount(std::clamp(room / std::max(1, label) + 1, 2, 6));
}

} // namespace ak
