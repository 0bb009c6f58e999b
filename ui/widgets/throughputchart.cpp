#include "widgets/throughputchart.h"

#include "models/outcomecolors.h"
#include "models/throughputchartmodel.h"
#include "widgets/chartpanel.h"
#include "widgets/emptystate.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedLayout>
#include <QStandardItemModel>
#include <QVXYModelMapper>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ak {

namespace {

QVXYModelMapper *mapper(ThroughputChartModel *model, QXYSeries *series, int yColumn, QObject *parent)
{
    auto *m = new QVXYModelMapper(parent);
    m->setXColumn(ThroughputChartModel::ExperimentColumn);
    m->setYColumn(yColumn);
    m->setSeries(series);
    m->setModel(model);
    return m;
}

} // namespace

ThroughputChart::ThroughputChart(ThroughputChartModel *model, QWidget *parent)
    : ChartPanel(parent)
    , m_model(model)
    , m_attempts(new QScatterSeries(this))
    , m_selected(new QScatterSeries(this))
    , m_best(new QLineSeries(this))
    , m_roof(new QLineSeries(this))
    , m_x(new QValueAxis(this))
    , m_y(new QValueAxis(this))
{
    setObjectName(QStringLiteral("ThroughputChart"));
    m_attempts->setName(QStringLiteral("attempts"));
    chartView()->setToolTip(
        QStringLiteral("Each point an experiment, coloured by outcome: kept green, pending amber, reverted "
                       "grey, rejected brown. The ring marks the experiment selected in the commit list.\n"
                       "Speedup: over PyTorch as timed with the kernel's baseline (baseline speedup × "
                       "baseline latency ÷ the experiment's latency), the latency the keep rule compares; "
                       "% of roof: the achieved rate ÷ the roof that bounds the kernel. The best line is "
                       "the head, a step at each keep."));
    m_attempts->setMarkerSize(7);
    m_attempts->setColor(outcomeColor(ExperimentStatus::Reverted));
    m_attempts->setBorderColor(Qt::transparent);
    m_selected->setName(QStringLiteral("selected"));
    m_selected->setMarkerSize(15);
    m_selected->setColor(Qt::transparent);
    m_selected->setBorderColor(QColor(0x1c, 0x71, 0xd8));
    QPen ring(QColor(0x1c, 0x71, 0xd8));
    ring.setWidthF(2.5);
    m_selected->setPen(ring);
    m_best->setName(tr("best kept"));
    QPen bestPen(QColor(0x1b, 0x7f, 0x3b));
    bestPen.setWidthF(2);
    m_best->setPen(bestPen);
    QPen roofPen(QColor(0xc0, 0x1c, 0x28));
    roofPen.setStyle(Qt::DashLine);
    m_roof->setPen(roofPen);
    for (QAbstractSeries *s :
        { static_cast<QAbstractSeries *>(m_roof), static_cast<QAbstractSeries *>(m_best),
            static_cast<QAbstractSeries *>(m_attempts), static_cast<QAbstractSeries *>(m_selected) })
        chart()->addSeries(s);
    m_x->setTitleText(QStringLiteral("experiment"));
    m_x->setLabelFormat(QStringLiteral("%d"));
    // Ticks on whole experiments: with the default five ticks over a fractional range, "%d" printed
    // rounded labels ("0, 3, 5, 8, 10") that named no experiment.
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    chart()->addAxis(m_x, Qt::AlignBottom);
    chart()->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries *s : chart()->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    finishSetup();
    recolour();
    // The ring needs no legend entry (the tooltip names it): three entries fit a chart beside the
    // kernel table at 1280 px, where four were cut to "Devi… best … atte… sele…" (#41).
    for (QLegendMarker *marker : chart()->legend()->markers(m_selected))
        marker->setVisible(false);

    m_noRows = new QStandardItemModel(0, ThroughputChartModel::ColumnCount, this);
    m_attemptsMapper = mapper(model, m_attempts, ThroughputChartModel::MeasuredColumn, this);
    m_roofMapper = mapper(model, m_roof, ThroughputChartModel::RoofColumn, this);

    // After the mappers (connected first, so the series already hold the new points): ranges, the
    // best line's start and the points' colours follow a reset, appended rows and changed outcomes.
    // Before a reset, the lines that may hold NaN (the best line before the first keep, the roof of a
    // run without one) map nothing: a mapper re-reads its model at the reset, ahead of relayout, and
    // Qt Charts warned "Ignored NaN" once per row of every kernel shown.
    connect(model, &QAbstractItemModel::modelAboutToBeReset, this, [this] { mapRows(m_roofMapper, 0, 0); });
    connect(model, &QAbstractItemModel::modelReset, this, &ThroughputChart::relayout);
    connect(model, &QAbstractItemModel::rowsInserted, this, &ThroughputChart::relayout);
    connect(model, &QAbstractItemModel::dataChanged, this, &ThroughputChart::relayout);
    relayout();
}

void ThroughputChart::setEmptyMessage(const QString &title, const QString &body)
{
    setEmptyText(title, body);
}

void ThroughputChart::mapRows(QVXYModelMapper *mapper, int first, int count)
{
    // No rows: the mapper reads the empty model. Zero rows of a model that has some made Qt Charts
    // warn "Invalid X coordinate index in model mapper" at every read (and a mapper cannot be
    // detached: setModel ignores nullptr).
    if (count == 0) {
        if (mapper->model() != m_noRows)
            mapper->setModel(m_noRows);
        return;
    }
    // Each setter reads the whole series again from the model: only on a change, so appended rows
    // stay an append (-1 maps to the last row, appended ones too). Rows first, then the model: one
    // read of the real rows.
    if (mapper->firstRow() != first)
        mapper->setFirstRow(first);
    if (mapper->rowCount() != count)
        mapper->setRowCount(count);
    if (mapper->model() != m_model)
        mapper->setModel(m_model);
}

void ThroughputChart::relayout()
{
    const int rows = m_model->rowCount();
    if (rows == 0) {
        showEmpty();
        return;
    }
    // The best line starts at the first kept experiment: before it there is nothing to draw, and
    // Qt Charts draws NaN badly. The roof line only exists when the roof is known.
    showBestAsSteps();
    mapRows(m_roofMapper, 0, m_model->hasRoof() ? -1 : 0);
    m_roof->setName(
        m_model->headerData(ThroughputChartModel::RoofColumn, Qt::Horizontal, Qt::DisplayRole).toString());
    m_y->setTitleText(m_model->yAxisTitle());

    // The roof's legend entry only when a roof is drawn: a CPU run has none to claim.
    for (QLegendMarker *marker : chart()->legend()->markers(m_roof))
        marker->setVisible(m_model->hasRoof());
    double xMin = m_model->index(0, ThroughputChartModel::ExperimentColumn).data().toDouble();
    double xMax = m_model->index(rows - 1, ThroughputChartModel::ExperimentColumn).data().toDouble();
    double yMin = std::numeric_limits<double>::infinity(), yMax = -yMin;
    for (int r = 0; r < rows; ++r) {
        for (int c : { int(ThroughputChartModel::MeasuredColumn), int(ThroughputChartModel::RoofColumn) }) {
            const double v = m_model->index(r, c).data().toDouble();
            if (!std::isnan(v)) {
                yMin = std::min(yMin, v);
                yMax = std::max(yMax, v);
            }
        }
        m_attempts->setPointConfiguration(
            r, QXYSeries::PointConfiguration::Color, pointColor(m_model->statusAt(r)));
    }
    if (xMax <= xMin)
        xMax = xMin + 1;
    m_x->setRange(xMin - 0.5, xMax + 0.5);
    // About six ticks, on whole experiments.
    m_x->setTickInterval(std::max(1.0, std::ceil((xMax - xMin + 1) / 6.0)));
    // The range of the data, not from zero: a 3 % gain must be visible (zero only when near it).
    const double pad = std::max((yMax - yMin) * 0.08, std::abs(yMax) * 0.02);
    const double lo = yMin - pad < 0 || yMin - pad < pad ? 0 : yMin - pad;
    m_y->setRange(lo, yMax > lo ? yMax + pad : lo + 1);
    m_y->applyNiceNumbers();
    showSelected();
    showChart();
}

void ThroughputChart::showBestAsSteps()
{
    // A step line: the head holds until the next keep replaces it, so a keep is a vertical step at
    // its experiment, never a slope from the one before (which put kept points off the line).
    QList<QPointF> steps;
    const int first = m_model->firstBestRow();
    for (int r = std::max(0, first); first >= 0 && r < m_model->rowCount(); ++r) {
        const double x = m_model->index(r, ThroughputChartModel::ExperimentColumn).data().toDouble();
        const double best = m_model->index(r, ThroughputChartModel::BestColumn).data().toDouble();
        if (!steps.isEmpty() && steps.last().y() != best)
            steps.append(QPointF(x, steps.last().y()));
        steps.append(QPointF(x, best));
    }
    m_best->replace(steps);
}

void ThroughputChart::setSelectedExperiment(int id)
{
    m_selectedId = id;
    showSelected();
}

void ThroughputChart::showSelected()
{
    const int row = m_selectedId > 0 ? m_model->rowOfExperiment(m_selectedId) : -1;
    if (row < 0) {
        m_selected->clear();
        return;
    }
    m_selected->replace(
        QList<QPointF> { { m_model->index(row, ThroughputChartModel::ExperimentColumn).data().toDouble(),
            m_model->index(row, ThroughputChartModel::MeasuredColumn).data().toDouble() } });
}

QColor ThroughputChart::outcomeColor(ExperimentStatus status)
{
    return QColor(QLatin1String(ak::outcomeColor(outcomeOf(status))));
}

QColor ThroughputChart::pointColor(ExperimentStatus status) const
{
    return OutcomeColors::readableOn(
        outcomeColor(status), palette().color(QPalette::Base), OutcomeColors::kGraphicContrast);
}

void ThroughputChart::recolour()
{
    // Every mark at 3:1 on the chart's background, light or dark (#41: "keep" dark green on dark grey).
    const QColor base = palette().color(QPalette::Base);
    auto mark = [&base](const QColor &c) {
        return OutcomeColors::readableOn(c, base, OutcomeColors::kGraphicContrast);
    };
    QPen ring(mark(QColor(0x1c, 0x71, 0xd8)));
    ring.setWidthF(2.5);
    m_selected->setPen(ring);
    m_selected->setBorderColor(ring.color());
    QPen bestPen(mark(QColor(0x1b, 0x7f, 0x3b)));
    bestPen.setWidthF(2);
    m_best->setPen(bestPen);
    QPen roofPen(mark(QColor(0xc0, 0x1c, 0x28)));
    roofPen.setStyle(Qt::DashLine);
    m_roof->setPen(roofPen);
    m_attempts->setColor(pointColor(ExperimentStatus::Reverted));
}

void ThroughputChart::changeEvent(QEvent *event)
{
    ChartPanel::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        recolour();
        relayout(); // the points' colours
    }
}

} // namespace ak
