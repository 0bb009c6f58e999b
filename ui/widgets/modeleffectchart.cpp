#include "modeleffectchart.h"

#include "chartpanel.h"
#include "emptystate.h"
#include "modelverification.h"
#include "numberformat.h"
#include "outcomecolors.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QHorizontalStackedBarSeries>
#include <QStackedLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace ak {

ModelEffectChart::ModelEffectChart(QWidget *parent)
    : ChartPanel(parent)
    , m_series(new QHorizontalStackedBarSeries(this))
    , m_final(new QBarSet(tr("in the final set")))
    , m_leftOut(new QBarSet(tr("left out")))
    , m_kernels(new QBarCategoryAxis(this))
    , m_effect(new QValueAxis(this))
{
    m_series->append(m_final);
    m_series->append(m_leftOut);
    m_series->setBarWidth(0.7);
    chart()->addSeries(m_series);
    chart()->setTitle(tr("Each kernel inside the model: % of the model's time it saves"));
    // Short: the chart's title already says what is measured; a dock at 1280 px cut the longer one.
    m_effect->setTitleText(tr("% saved (leave one out)"));
    m_effect->setLabelFormat(QStringLiteral("%.1f"));
    m_kernels->setTruncateLabels(false); // a narrow dock would otherwise turn every name into "..."
    chart()->addAxis(m_kernels, Qt::AlignLeft);
    chart()->addAxis(m_effect, Qt::AlignBottom);
    m_series->attachAxis(m_kernels);
    m_series->attachAxis(m_effect);
    finishSetup();
    recolour(); // after the chart's theme, which gives each bar set a pen of its own
    chartView()->setMinimumHeight(180);
    setEmptyText(tr("No in-model effect measured"),
        tr("Only kernels that plug into the model and pass parity are timed inside it."));
    showEmpty();
}

void ModelEffectChart::recolour()
{
    const QColor base = palette().color(QPalette::Base);
    auto paint = [&base](QBarSet *set, const QColor &wanted) {
        const QColor c = OutcomeColors::readableOn(wanted, base, OutcomeColors::kGraphicContrast);
        set->setColor(c);
        set->setBorderColor(c);
    };
    paint(m_final, QColor(0x1b, 0x7f, 0x3b));
    paint(m_leftOut, QColor(0xb0, 0xb0, 0xb0));
}

void ModelEffectChart::changeEvent(QEvent *event)
{
    ChartPanel::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        recolour();
}

void ModelEffectChart::clear()
{
    m_final->remove(0, m_final->count());
    m_leftOut->remove(0, m_leftOut->count());
    m_kernels->clear();
    m_categories.clear();
    showEmpty();
}

void ModelEffectChart::setVerification(const ModelVerification &verification)
{
    clear();
    QVector<const KernelVerification *> timed;
    for (const KernelVerification &k : verification.kernels)
        if (!std::isnan(k.effectPct))
            timed.append(&k);
    if (timed.isEmpty())
        return;
    // Qt Charts draws the first category at the bottom: ascending puts the largest win on top.
    std::stable_sort(timed.begin(), timed.end(),
        [](const KernelVerification *a, const KernelVerification *b) { return a->effectPct < b->effectPct; });
    double low = 0;
    double high = 0;
    for (const KernelVerification *k : timed) {
        // The value is in the label too: bar labels would also print the other set's zeros.
        m_categories << QStringLiteral("%1  %2").arg(k->kernel, formatSignedPercent(k->effectPct));
        m_final->append(k->inFinalSet ? k->effectPct : 0.0);
        m_leftOut->append(k->inFinalSet ? 0.0 : k->effectPct);
        low = std::min(low, k->effectPct);
        high = std::max(high, k->effectPct);
    }
    m_kernels->append(m_categories);
    // Qt Charts drops category labels that do not fit: give every kernel a row of its own.
    chartView()->setMinimumHeight(std::max(180, 110 + 26 * int(timed.size())));
    const double pad = std::max(0.5, 0.1 * (high - low));
    m_effect->setRange(low < 0 ? low - pad : 0.0, high > 0 ? high + pad : 0.0 + pad);
    m_effect->applyNiceNumbers();
    showChart();
}

} // namespace ak
