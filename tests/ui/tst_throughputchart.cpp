#include "testregistry.h"
#include "testsnapshot.h"
#include "throughputchart.h"
#include "throughputchartmodel.h"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QScatterSeries>
#include <QTest>
#include <QValueAxis>

using namespace ak;

// What the chart claims: whole-experiment ticks, a y-range that shows the changes, points coloured
// by outcome, the roof in the legend only when drawn, the selected experiment ringed.
class ThroughputChartTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void ticksRangeColoursAndSelection()
    {
        auto run = test::makeRun(
            QStringLiteral("/runs/x")); // 01-matmul: baseline 40 %, reverted 36, kept 52, failed, kept 60
        ThroughputChartModel model;
        ThroughputChart chart(&model);
        model.setKernel(run->kernels[0], QStringLiteral("01-matmul"), run->experiments);
        QVERIFY(chart.isShowingChart());
        QCOMPARE(model.rowCount(), 4); // the failed one has no point

        QCOMPARE(chart.xAxis()->tickType(), QValueAxis::TicksDynamic);
        QCOMPARE(chart.xAxis()->tickAnchor(), 0.0);
        const double step = chart.xAxis()->tickInterval();
        QVERIFY2(step >= 1 && step == std::floor(step), qPrintable(QString::number(step)));
        QVERIFY2(
            chart.yAxis()->min() > 0, qPrintable(QString::number(chart.yAxis()->min()))); // not from zero
        QVERIFY(chart.yAxis()->min() <= 36 && chart.yAxis()->max() >= 100); // the roof is in view

        const ExperimentStatus expected[] = { ExperimentStatus::Baseline, ExperimentStatus::Reverted,
            ExperimentStatus::Kept, ExperimentStatus::Kept };
        for (int i = 0; i < 4; ++i)
            QCOMPARE(chart.attemptsSeries()
                         ->pointConfiguration(i)
                         .value(QXYSeries::PointConfiguration::Color)
                         .value<QColor>(),
                ThroughputChart::outcomeColor(expected[i]));
        QVERIFY(ThroughputChart::outcomeColor(ExperimentStatus::Kept)
            != ThroughputChart::outcomeColor(ExperimentStatus::Reverted));

        chart.setSelectedExperiment(3);
        QCOMPARE(chart.selectedSeries()->count(), 1);
        QCOMPARE(chart.selectedSeries()->at(0), QPointF(3, 52));
        chart.setSelectedExperiment(4); // failed: nothing to ring
        QCOMPARE(chart.selectedSeries()->count(), 0);
        chart.setSelectedExperiment(5);
        model.setKernel(
            run->kernels[0], QStringLiteral("01-matmul"), run->experiments); // a reload keeps the ring
        QCOMPARE(chart.selectedSeries()->count(), 1);
        QCOMPARE(chart.selectedSeries()->at(0), QPointF(5, 60));

        const auto roofMarkers = chart.chart()->legend()->markers(chart.chart()->series().at(0));
        QVERIFY(!roofMarkers.isEmpty() && roofMarkers.first()->isVisible());
    }

    void noRoofNoRoofInTheLegend()
    {
        // A CPU run: no % of peak, no headroom; the chart plots speedup and claims no roof.
        auto run = test::makeRun(QStringLiteral("/runs/cpu"));
        for (Experiment &e : run->experiments)
            e.metrics.pctPeak = std::nan("");
        KernelRecord k = run->kernels[0];
        k.maxSpeedup = 0;
        ThroughputChartModel model;
        ThroughputChart chart(&model);
        model.setKernel(k, QStringLiteral("01-matmul"), run->experiments);
        QVERIFY(!model.hasRoof());
        const auto roofMarkers = chart.chart()->legend()->markers(chart.chart()->series().at(0));
        QVERIFY(!roofMarkers.isEmpty());
        QVERIFY(!roofMarkers.first()->isVisible());
        QVERIFY(chart.yAxis()->max() >= 1.5 && chart.yAxis()->max() < 3); // fitted to 0.9–1.5, not to a roof
    }
};

AK_TEST_CLASS(ThroughputChartTest)
#include "tst_throughputchart.moc"
