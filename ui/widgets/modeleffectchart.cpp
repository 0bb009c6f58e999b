#include "widgets/modeleffectchart.h"

#include "models/outcomecolors.h"
#include "modelverification.h"
#include "numberformat.h"
#include "widgets/chartpanel.h"
#include "widgets/emptystate.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QFontMetrics>
#include <QHorizontalStackedBarSeries>
#include <QResizeEvent>
#include <QStackedLayout>
#include <QToolTip>
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
    // Short enough for the Model dock at 1280 px (the longer title was cut with "…" there).
    chart()->setTitle(tr("Model time each kernel saves"));
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
    // The whole name and number on hover, whichever form the label has.
    connect(m_series, &QHorizontalStackedBarSeries::hovered, this, [this](bool on, int index, QBarSet *) {
        if (on && index >= 0 && index < m_rows.size())
            QToolTip::showText(QCursor::pos(), rowToolTip(m_rows[index]), chartView());
        else
            QToolTip::hideText();
    });
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
    m_rows.clear();
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
        m_rows.append({ k->kernel, k->effectPct, k->inFinalSet });
        m_final->append(k->inFinalSet ? k->effectPct : 0.0);
        m_leftOut->append(k->inFinalSet ? 0.0 : k->effectPct);
        low = std::min(low, k->effectPct);
        high = std::max(high, k->effectPct);
    }
    if (chartView()->isVisible()) // else the resize that comes with show() decides
        m_twoLines = !labelsFitOneLine(chartView()->width());
    relabel();
    const double pad = std::max(0.5, 0.1 * (high - low));
    m_effect->setRange(low < 0 ? low - pad : 0.0, high > 0 ? high + pad : 0.0 + pad);
    m_effect->applyNiceNumbers();
    showChart();
}

QString ModelEffectChart::rowToolTip(const Row &row)
{
    return row.inFinalSet
        ? tr("%1: saves %2 of the model's time (in the final set)")
              .arg(row.kernel, formatSignedPercent(row.pct))
        : tr("%1: saves %2 of the model's time (left out)").arg(row.kernel, formatSignedPercent(row.pct));
}

bool ModelEffectChart::labelsFitOneLine(int viewWidth) const
{
    // Qt Charts gives the category axis about two fifths of the view and draws a label it does not
    // truncate past the view's left edge (clipped there): past that, name and number take a line each.
    const QFontMetrics fm(m_kernels->labelsFont());
    int widest = 0;
    for (const Row &r : m_rows)
        widest = std::max(
            widest, fm.horizontalAdvance(r.kernel + QStringLiteral("  ") + formatSignedPercent(r.pct)));
    return widest <= viewWidth * 35 / 100;
}

void ModelEffectChart::relabel()
{
    // The value is in the label: bar labels would also print the other set's zeros.
    m_categories.clear();
    for (const Row &r : m_rows)
        m_categories << (m_twoLines ? QStringLiteral("%1<br>%2") : QStringLiteral("%1  %2"))
                            .arg(r.kernel, formatSignedPercent(r.pct));
    m_kernels->clear();
    m_kernels->append(m_categories);
    // Qt Charts drops category labels that do not fit: give every kernel a row of its own.
    chartView()->setMinimumHeight(std::max(180, 110 + (m_twoLines ? 38 : 26) * int(m_rows.size())));
}

void ModelEffectChart::resizeEvent(QResizeEvent *event)
{
    ChartPanel::resizeEvent(event);
    const bool twoLines = !labelsFitOneLine(chartView()->width());
    if (twoLines != m_twoLines && !m_rows.isEmpty()) {
        m_twoLines = twoLines;
        relabel();
    }
    m_twoLines = twoLines;
}

} // namespace ak
