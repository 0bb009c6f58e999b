#include "models/throughputchartmodel.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/throughputchart.h"

#include <QAbstractItemModelTester>
#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QScatterSeries>
#include <QSignalSpy>
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
                chart.pointColor(expected[i]));
        QVERIFY(chart.pointColor(ExperimentStatus::Kept) != chart.pointColor(ExperimentStatus::Reverted));

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

    void aReloadThatOnlyAppendsInsertsRows()
    {
        // Issue #14: every reload reset the chart model, rebuilding every series of a 10k-experiment
        // kernel. The same kernel again inserts the new rows; a changed outcome is a dataChanged;
        // another kernel still resets.
        auto run = test::makeRun(QStringLiteral("/runs/live"));
        ThroughputChartModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        ThroughputChart chart(&model);
        const QString mm = QStringLiteral("01-matmul");
        model.setKernel(run->kernels[0], mm, run->experiments);
        QCOMPARE(model.rowCount(), 4);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

        model.setKernel(run->kernels[0], mm, run->experiments); // nothing new: nothing signalled
        QCOMPARE(resets.count() + inserted.count() + changed.count(), 0);

        run->experiments.append(test::experiment(7, mm, ExperimentStatus::Reverted, 1.2, 55.0));
        run->experiments.append(test::experiment(8, mm, ExperimentStatus::Pending, 1.9, 75.0));
        model.setKernel(run->kernels[0], mm, run->experiments);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(changed.count(), 0);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted.at(0).at(1).toInt(), 4);
        QCOMPARE(inserted.at(0).at(2).toInt(), 5);
        // The chart follows the inserted rows: points, the best line to the end, colours, the x range.
        QCOMPARE(chart.attemptsSeries()->count(), 6);
        QCOMPARE(chart.attemptsSeries()->at(5), QPointF(8, 75));
        QCOMPARE(chart.attemptsSeries()
                     ->pointConfiguration(5)
                     .value(QXYSeries::PointConfiguration::Color)
                     .value<QColor>(),
            chart.pointColor(ExperimentStatus::Pending));
        QVERIFY(chart.xAxis()->max() >= 8);
        auto *best = qobject_cast<QXYSeries *>(chart.chart()->series().at(1)); // roof, best, attempts, ring
        QVERIFY(best);
        // From the baseline (the first kept row) to the appended rows, as steps: a keep adds a
        // vertical step at its experiment (#3 and #5 here), never a slope from the point before.
        QCOMPARE(best->count(), 8);
        QCOMPARE(best, chart.bestSeries());
        for (int i = 1; i < best->count(); ++i)
            QVERIFY2(best->at(i).x() == best->at(i - 1).x() || best->at(i).y() == best->at(i - 1).y(),
                qPrintable(QStringLiteral("a slope at point %1").arg(i)));
        QCOMPARE(best->at(2), QPointF(3, 40));
        QCOMPARE(best->at(3), QPointF(3, 52));
        QCOMPARE(model.index(5, ThroughputChartModel::BestColumn).data().toDouble(), 60.0);

        // Experiment 8 accepted: its row changes (the best line moves), nothing is inserted or reset.
        run->experiments.last().status = ExperimentStatus::Kept;
        model.setKernel(run->kernels[0], mm, run->experiments);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), 5);
        QCOMPARE(model.index(5, ThroughputChartModel::BestColumn).data().toDouble(), 75.0);
        QCOMPARE(chart.attemptsSeries()
                     ->pointConfiguration(5)
                     .value(QXYSeries::PointConfiguration::Color)
                     .value<QColor>(),
            chart.pointColor(ExperimentStatus::Kept));

        // Another kernel: a reset.
        model.setKernel(run->kernels[1], QStringLiteral("02-softmax"), run->experiments);
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(chart.attemptsSeries()->count(), 1);
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
