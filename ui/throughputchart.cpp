#include "throughputchart.h"

#include "emptystate.h"
#include "throughputchartmodel.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedLayout>
#include <QVXYModelMapper>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

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
    : QWidget(parent)
    , m_model(model)
    , m_stack(new QStackedLayout(this))
    , m_empty(new EmptyState(this))
    , m_view(new QChartView(this))
    , m_chart(new QChart)
    , m_attempts(new QScatterSeries(this))
    , m_best(new QLineSeries(this))
    , m_roof(new QLineSeries(this))
    , m_x(new QValueAxis(this))
    , m_y(new QValueAxis(this))
{
    m_attempts->setName(QStringLiteral("attempts"));
    m_attempts->setMarkerSize(7);
    m_best->setName(QStringLiteral("best kept"));
    QPen bestPen(QColor(0x1b, 0x7f, 0x3b));
    bestPen.setWidthF(2);
    m_best->setPen(bestPen);
    QPen roofPen(QColor(0xc0, 0x1c, 0x28));
    roofPen.setStyle(Qt::DashLine);
    m_roof->setPen(roofPen);
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(m_roof), static_cast<QAbstractSeries *>(m_best),
                               static_cast<QAbstractSeries *>(m_attempts)})
        m_chart->addSeries(s);
    m_x->setTitleText(QStringLiteral("experiment"));
    m_x->setLabelFormat(QStringLiteral("%d"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries *s : m_chart->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_view->setChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);

    m_attemptsMapper = mapper(model, m_attempts, ThroughputChartModel::MeasuredColumn, this);
    m_bestMapper = mapper(model, m_best, ThroughputChartModel::BestColumn, this);
    m_roofMapper = mapper(model, m_roof, ThroughputChartModel::RoofColumn, this);

    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_view);
    connect(model, &QAbstractItemModel::modelReset, this, &ThroughputChart::modelReset);
    modelReset();
}

void ThroughputChart::setEmptyMessage(const QString &title, const QString &body)
{
    m_empty->setMessage(title, body);
}

bool ThroughputChart::isShowingChart() const
{
    return m_stack->currentWidget() == m_view;
}

void ThroughputChart::modelReset()
{
    const int rows = m_model->rowCount();
    if (rows == 0) {
        m_stack->setCurrentWidget(m_empty);
        return;
    }
    // The best line starts at the first kept experiment: before it there is nothing to draw, and
    // Qt Charts draws NaN badly. The roof line only exists when the roof is known.
    const int firstBest = m_model->firstBestRow();
    m_bestMapper->setFirstRow(std::max(0, firstBest));
    m_bestMapper->setRowCount(firstBest < 0 ? 0 : rows - firstBest);
    m_roofMapper->setRowCount(m_model->hasRoof() ? -1 : 0);
    m_roof->setName(m_model->headerData(ThroughputChartModel::RoofColumn, Qt::Horizontal, Qt::DisplayRole).toString());
    m_y->setTitleText(m_model->yAxisTitle());

    double xMin = m_model->index(0, ThroughputChartModel::ExperimentColumn).data().toDouble();
    double xMax = m_model->index(rows - 1, ThroughputChartModel::ExperimentColumn).data().toDouble();
    double yMax = 0;
    for (int r = 0; r < rows; ++r) {
        for (int c : {int(ThroughputChartModel::MeasuredColumn), int(ThroughputChartModel::RoofColumn)}) {
            const double v = m_model->index(r, c).data().toDouble();
            if (!std::isnan(v))
                yMax = std::max(yMax, v);
        }
    }
    if (xMax <= xMin)
        xMax = xMin + 1;
    m_x->setRange(xMin - 0.5, xMax + 0.5);
    m_y->setRange(0, yMax > 0 ? yMax * 1.1 : 1);
    m_stack->setCurrentWidget(m_view);
}

} // namespace ak
