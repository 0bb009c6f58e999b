#pragma once

#include "widgets/chartpanel.h"
#include <QStringList>
#include <QVector>

class QBarCategoryAxis;
class QBarSet;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace ak {

struct ModelVerification;

// Each kernel's measured contribution inside the model (verification.json effect_pct: % of the
// model's time it saves, leaving it out of the set) as horizontal bars, final-set kernels in one
// colour and left-out ones in another. Kernels verify could not time (not plugged, parity failed)
// have no bar; the model view lists them with their reason.
class ModelEffectChart : public ChartPanel
{
    Q_OBJECT
public:
    explicit ModelEffectChart(QWidget *parent = nullptr);

    void setVerification(const ModelVerification &verification);
    void clear();

    // One category per timed kernel, top to bottom in the chart's order ("01-matmul  +4.2 %", or
    // "01-matmul<br>+4.2 %" on two lines where the chart is too narrow for one); the value of a kernel
    // is in the set it belongs to and 0 in the other (stacked, so each kernel has one bar).
    QStringList categories() const { return m_categories; }
    QBarSet *finalSetBars() const { return m_final; }
    QBarSet *leftOutBars() const { return m_leftOut; }

protected:
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Row
    {
        QString kernel;
        double pct = 0;
        bool inFinalSet = false;
    };
    static QString rowToolTip(const Row &row);
    bool labelsFitOneLine(int viewWidth) const;
    void relabel();

    // The bars' colours moved, in lightness only, until each reads at 3:1 on the palette's Base
    // (WCAG non-text contrast): the left-out grey was 2.1:1 on white, the final-set green 2.8:1 on a
    // #2b2b2b base.
    void recolour();

    QHorizontalStackedBarSeries *m_series;
    QBarSet *m_final;
    QBarSet *m_leftOut;
    QBarCategoryAxis *m_kernels;
    QValueAxis *m_effect;
    QStringList m_categories;
    QVector<Row> m_rows;
    bool m_twoLines = false;
};

} // namespace ak
