#include "widgets/chartpanel.h"

#include "widgets/chartpalette.h"
#include "widgets/emptystate.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QLegend>
#include <QStackedLayout>

namespace ak {

ChartPanel::ChartPanel(QWidget *parent)
    : QWidget(parent)
    , m_stack(new QStackedLayout(this))
    , m_empty(new EmptyState(this))
    , m_view(new QChartView(this))
    , m_chart(new QChart)
{
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_view);
    m_stack->setCurrentWidget(m_empty);
}

bool ChartPanel::isShowingChart() const
{
    return m_stack->currentWidget() == m_view;
}

void ChartPanel::finishSetup()
{
    // The view takes the chart only now, with its series in: legend markers made for series added to
    // a chart already on a scene did not take setVisible (the roof's, the measured line's).
    m_view->setChart(m_chart);
    applyChartPalette(m_view, palette());
}

void ChartPanel::showChart()
{
    m_stack->setCurrentWidget(m_view);
}

void ChartPanel::showEmpty()
{
    m_stack->setCurrentWidget(m_empty);
}

void ChartPanel::setEmptyText(const QString &title, const QString &body)
{
    m_empty->setMessage(title, body);
}

void ChartPanel::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyChartPalette(m_view, palette());
}

} // namespace ak
