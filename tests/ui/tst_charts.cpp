// The run-level chart (ModelSpeedupChart): a step line of the projected model speedup over time that
// ends at the run's newest experiment, the measured speedup drawn only when Verify measured one; and
// every chart of the window following the palette when it is switched live (light to dark and back).
#include "models/throughputchartmodel.h"
#include "runstats.h"
#include "testfixtures.h"
#include "testpalettes.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/modeleffectchart.h"
#include "widgets/modelspeedupchart.h"
#include "widgets/runworkspace.h"
#include "widgets/steeringactions.h"
#include "widgets/throughputchart.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QDateTimeAxis>
#include <QFontMetrics>
#include <QGraphicsTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTest>
#include <QValueAxis>

#include <cmath>

using namespace ak;

namespace {

// The test run with its experiments finished a minute apart (experiment n at 01:00 + n minutes).
std::shared_ptr<ak::RunSnapshot> minuteApartRun()
{
    auto run = ak::test::makeRun(QStringLiteral("/runs/x"));
    const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-05T01:00:00Z"), Qt::ISODate);
    for (ak::Experiment &e : run->experiments)
        e.finished = t0.addSecs(60 * e.id);
    return run;
}

// The chart's background and every axis's labels are painted from the palette.
void checkFollows(QWidget *widget, QChart *chart, const QPalette &palette)
{
    widget->setPalette(palette);
    QCOMPARE(chart->backgroundBrush().color(), palette.color(QPalette::Base));
    QCOMPARE(chart->legend()->labelColor(), palette.color(QPalette::Text));
    QVERIFY(!chart->axes().isEmpty());
    for (QAbstractAxis *axis : chart->axes())
        QCOMPARE(axis->labelsColor(), palette.color(QPalette::Text));
}

} // namespace

class ChartsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void hiddenModelTabCatchesUpWhenShown()
    {
        // Recomputing the run's whole projection took ~25 ms of every reload of a 10k-experiment live
        // run (bench_live): the workspace's Model tab follows the run only while it is shown.
        auto run = test::makeRun(QStringLiteral("/runs/x"));
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-05T01:00:00Z"), Qt::ISODate);
        for (Experiment &e : run->experiments) {
            e.started = t0.addSecs(60 * e.id);
            e.finished = e.started.addSecs(30);
        }
        SteeringActions actions;
        RunWorkspace ws(&actions);
        ws.resize(1200, 800);
        ws.show();
        ws.setSnapshot(run);
        QVERIFY(ws.modelChart()->timeline().isEmpty()); // the Kernel tab is in front
        auto *tabs = test::named<QTabWidget>(&ws, "ChartTabs");
        tabs->setCurrentWidget(ws.modelChart());
        QCOMPARE(ws.modelChart()->timeline().size(), 3);
        QCOMPARE(ws.modelChart()->projectedSeries()->points().last().y(), run->projectedSpeedup());
        // In front, it follows every new snapshot.
        auto next = std::make_shared<RunSnapshot>(*run);
        next->experiments.append(
            test::experiment(99, QStringLiteral("01-matmul"), ExperimentStatus::Kept, 1.9, 40));
        next->experiments.last().started = t0.addSecs(60 * 99);
        next->experiments.last().finished = next->experiments.last().started.addSecs(30);
        next->experimentIndex.insert(99, next->experiments.size() - 1);
        ws.setSnapshot(next);
        QVERIFY(ws.modelChart()->timeline().size() > 3);
    }

    void projectedSpeedupOverTime()
    {
        auto run = test::makeRun(QStringLiteral("/runs/x")); // 01-matmul (55 %): baseline, kept 1.3, kept 1.5
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-05T01:00:00Z"), Qt::ISODate);
        for (Experiment &e : run->experiments) {
            e.started = t0.addSecs(60 * e.id);
            e.finished = e.started.addSecs(30);
        }
        ModelSpeedupChart chart;
        chart.setSnapshot(*run);
        QVERIFY(chart.isShowingChart());
        QCOMPARE(chart.timeline().size(), 3); // the baseline and the two keeps
        const QList<QPointF> points = chart.projectedSeries()->points();
        QCOMPARE(points.size(), 2 * 3 - 1 + 1); // steps, then on to the newest experiment
        QCOMPARE(points.last().y(), run->projectedSpeedup());
        QVERIFY(run->projectedSpeedup() > 1.2);
        QCOMPARE(qint64(points.last().x()), run->experiments.last().finished.toMSecsSinceEpoch());
        // A step: the value before each jump is the previous projection, at the jump's time.
        QCOMPARE(points[1].x(), points[2].x());
        QCOMPARE(points[1].y(), points[0].y());
        QVERIFY(points[2].y() > points[1].y());
        // Not from zero: a few percent must show.
        QVERIFY(chart.yAxis()->min() > 0.5 && chart.yAxis()->min() <= 1.0);
        QVERIFY(chart.yAxis()->max() >= run->projectedSpeedup());
        // Nothing measured: no measured line, and no legend entry claiming one.
        QCOMPARE(chart.measuredSeries()->count(), 0);
        QVERIFY(!chart.chart()->legend()->markers(chart.measuredSeries()).first()->isVisible());

        ModelVerification v;
        v.modelSpeedup = 1.18;
        run->verification = v;
        chart.setSnapshot(*run);
        QCOMPARE(chart.measuredSeries()->count(), 2);
        QCOMPARE(chart.measuredSeries()->at(0).y(), 1.18);
        QVERIFY(chart.chart()->legend()->markers(chart.measuredSeries()).first()->isVisible());
        QVERIFY(chart.measuredSeries()->name().contains(QStringLiteral("1.18")));

        chart.setSnapshot(*test::makeRun(QStringLiteral("/runs/y"), false)); // freshly profiled
        QVERIFY(!chart.isShowingChart());
        QVERIFY(chart.timeline().isEmpty());
    }

    void projectedLineNeverGoesBackInTime()
    {
        // The loop numbers every baseline when it starts and measures each when it reaches that
        // kernel: here the softmax's baseline (#2) is measured after the matmul's keeps (#3, #5).
        auto run = test::makeRun(QStringLiteral("/runs/x"));
        run->experiments[1]
            = test::experiment(2, QStringLiteral("02-softmax"), ExperimentStatus::Baseline, 1.2, 30);
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-05T01:00:00Z"), Qt::ISODate);
        for (Experiment &e : run->experiments) {
            e.started = t0.addSecs(60 * e.id);
            e.finished = e.started.addSecs(30);
        }
        run->experiments[1].finished = t0.addSecs(60 * 10);
        run->kernels[1].headExperiment = 2; // as the loader sets it
        ModelSpeedupChart chart;
        chart.setSnapshot(*run);
        QCOMPARE(chart.timeline().last().first, 2);
        const QList<QPointF> points = chart.projectedSeries()->points();
        for (int i = 1; i < points.size(); ++i)
            QVERIFY2(points[i].x() >= points[i - 1].x(), qPrintable(QString::number(i)));
        QCOMPARE(points.last().y(), run->projectedSpeedup());
        QVERIFY(points.last().y() > points[points.size() - 3].y()); // the late baseline's step is last
    }

    void timeTicksFitTheWidth()
    {
        // Six "HH:mm:ss" labels do not fit a chart squeezed beside the Model dock: fewer ticks, each
        // label whole, instead of six cut to "21:1…".
        auto run = minuteApartRun();
        ModelSpeedupChart chart;
        chart.setSnapshot(*run);
        chart.resize(1200, 400);
        chart.show(); // resize events reach a widget that is shown
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QCOMPARE(chart.xAxis()->tickCount(), 6);
        chart.resize(300, 400);
        QTRY_COMPARE(chart.width(), 300);
        const int narrow = chart.xAxis()->tickCount();
        // Each gap between ticks holds one whole label (the time axis spans the panel less the
        // value axis), and that is fewer than six.
        const int label
            = QFontMetrics(chart.xAxis()->labelsFont()).horizontalAdvance(QStringLiteral("23:58:58"));
        QVERIFY2(narrow >= 2 && narrow < 6, qPrintable(QString::number(narrow)));
        QVERIFY2(
            (narrow - 1) * label <= 300 - 80, qPrintable(QStringLiteral("%1 x %2").arg(narrow).arg(label)));
        chart.setSnapshot(*run); // a reload keeps the fitted count
        QCOMPARE(chart.xAxis()->tickCount(), narrow);
    }

    void legendLabelsFitTheWidth()
    {
        // Beside a docked panel Qt Charts cut the legend to "original m… measured… projected …":
        // shorter labels instead, each whole; in full when there is room.
        auto run = minuteApartRun();
        ModelVerification v;
        v.modelSpeedup = 1.03;
        run->verification = v;
        ModelSpeedupChart chart;
        chart.setSnapshot(*run);
        auto labels = [&chart] {
            QStringList texts;
            QList<QGraphicsItem *> todo = chart.chart()->legend()->childItems();
            while (!todo.isEmpty()) {
                QGraphicsItem *item = todo.takeFirst();
                todo += item->childItems();
                if (auto *text = dynamic_cast<QGraphicsTextItem *>(item); text && item->isVisible())
                    texts << text->toPlainText();
            }
            return texts;
        };
        chart.resize(1200, 400);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QTRY_VERIFY(labels().join(QLatin1Char('|')).contains(QStringLiteral("(Verify)")));
        auto whole = [&labels] {
            const QStringList shown = labels();
            return shown.size() == 3 && std::none_of(shown.begin(), shown.end(), [](const QString &t) {
                return t.contains(QChar(0x2026)) || t.contains(QStringLiteral("..."));
            });
        };
        for (int width : { 420, 300 }) {
            chart.resize(width, 400);
            QTRY_COMPARE(chart.width(), width);
            QTRY_VERIFY2(whole(),
                qPrintable(QStringLiteral("%1 px: %2").arg(width).arg(labels().join(QLatin1Char('|')))));
        }
        QVERIFY(chart.measuredSeries()->name().contains(QStringLiteral("(Verify)"))); // the series keeps it
    }

    void noNaNWarningsOnAKernelWithoutRoofOrKeep()
    {
        // A CPU run: no % of roof, so the chart plots speedup and has no roof line (NaN in the model's
        // roof column), and a kernel whose first experiment is no keep (NaN best before it). The
        // mappers re-read the model at each reset: Qt Charts printed "Ignored NaN" per such row.
        auto run = test::makeRun(QStringLiteral("/runs/x"));
        for (Experiment &e : run->experiments)
            e.metrics.pctPeak = std::nan("");
        for (KernelRecord &k : run->kernels)
            k.maxSpeedup = 0;
        run->experiments[0].status = ExperimentStatus::Reverted;
        ThroughputChartModel model;
        ThroughputChart chart(&model);
        QTest::failOnWarning(QRegularExpression(QStringLiteral("NaN")));
        // Nor "Invalid X coordinate index in model mapper" for the lines that show nothing.
        QTest::failOnWarning(QRegularExpression(QStringLiteral("model mapper")));
        model.setKernel(run->kernels[0], QStringLiteral("01-matmul"), run->experiments);
        QVERIFY(!model.hasRoof());
        QCOMPARE(chart.chart()->series().size(), 4);
        model.setKernel(run->kernels[1], QStringLiteral("02-softmax"), run->experiments); // a reset
        model.setKernel(run->kernels[0], QStringLiteral("01-matmul"), run->experiments); // and back
        QVERIFY(model.rowCount() > 0);
    }

    void chartsFollowThePaletteLive()
    {
        auto run = test::makeRun(QStringLiteral("/runs/x"));
        for (Experiment &e : run->experiments)
            e.finished = QDateTime::currentDateTimeUtc().addSecs(e.id);
        ModelSpeedupChart model;
        model.setSnapshot(*run);
        ThroughputChartModel throughputModel;
        ThroughputChart throughput(&throughputModel);
        throughputModel.setKernel(run->kernels[0], QStringLiteral("01-matmul"), run->experiments);
        ModelEffectChart effect;
        for (const QPalette &p : { test::darkPalette(), test::lightPalette(), test::darkPalette() }) {
            checkFollows(&model, model.chart(), p);
            checkFollows(&throughput, throughput.chart(), p);
            QChart *effectChart = effect.findChild<QChartView *>()->chart();
            checkFollows(&effect, effectChart, p);
        }
    }
};

AK_TEST_CLASS(ChartsTest)
#include "tst_charts.moc"
