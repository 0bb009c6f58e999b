#include "experimentmodel.h"
#include "outcomecolors.h"
#include "testpalettes.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "throughputchart.h"
#include "throughputchartmodel.h"

#include <QApplication>
#include <QLineSeries>
#include <QScatterSeries>
#include <QtTest>

using namespace ak;

class OutcomeColorsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void contrastIsWcag()
    {
        QCOMPARE(qRound(OutcomeColors::contrast(Qt::black, Qt::white) * 10), 210);
        QCOMPARE(OutcomeColors::contrast(Qt::white, Qt::white), 1.0);
    }

    void everyOutcomeReadsOnLightAndDark()
    {
        // Each outcome's colour as text on the Base of a light and of a dark palette: at least 4.5:1.
        // Core's own "keep" green on the dark base is what failed (it stays as it is on light ones).
        const QPalette dark = test::darkPalette();
        QVERIFY(OutcomeColors::contrast(
                    QColor(QLatin1String(outcomeColor(ExperimentOutcome::Kept))), dark.color(QPalette::Base))
            < 4.5);
        for (const QPalette &palette : { test::lightPalette(), dark }) {
            for (ExperimentOutcome o : { ExperimentOutcome::Baseline, ExperimentOutcome::Kept,
                     ExperimentOutcome::Pending, ExperimentOutcome::Rejected, ExperimentOutcome::Reverted,
                     ExperimentOutcome::Running, ExperimentOutcome::Failed }) {
                const QColor c = OutcomeColors::text(o, palette);
                const double ratio = OutcomeColors::contrast(c, palette.color(QPalette::Base));
                QVERIFY2(ratio >= 4.5,
                    qPrintable(QStringLiteral("%1 %2 on %3: %4:1")
                                   .arg(outcomeName(o), c.name(), palette.color(QPalette::Base).name())
                                   .arg(ratio)));
            }
        }
    }

    void chartMarksReadOnLightAndDark()
    {
        // Every mark of the kernel chart — each outcome's points, the best line, the roof, the ring —
        // at 3:1 (WCAG non-text contrast) on the chart's background in a light and a dark palette,
        // switched live.
        auto run = test::makeRun(QStringLiteral("/r"));
        run->experiments.append(
            test::experiment(7, QStringLiteral("01-matmul"), ExperimentStatus::Rejected, 1.2, 50));
        run->experiments.append(
            test::experiment(8, QStringLiteral("01-matmul"), ExperimentStatus::Pending, 1.4, 58));
        ThroughputChartModel model;
        ThroughputChart chart(&model);
        model.setKernel(run->kernels[0], QStringLiteral("01-matmul"), run->experiments);
        chart.setSelectedExperiment(5);
        // The reverted grey as core has it is too faint on a white base: the chart must move it.
        QVERIFY(OutcomeColors::contrast(ThroughputChart::outcomeColor(ExperimentStatus::Reverted), Qt::white)
            < 3.0);
        for (const QPalette &palette : { test::lightPalette(), test::darkPalette(), test::lightPalette() }) {
            chart.setPalette(palette);
            const QColor base = palette.color(QPalette::Base);
            QStringList low;
            auto check = [&](const QString &what, const QColor &c) {
                const double ratio = OutcomeColors::contrast(c, base);
                if (ratio < 3.0)
                    low << QStringLiteral("%1 %2 on %3: %4:1").arg(what, c.name(), base.name()).arg(ratio);
            };
            check(QStringLiteral("best line"), chart.bestSeries()->pen().color());
            check(QStringLiteral("roof"), chart.roofSeries()->pen().color());
            check(QStringLiteral("ring"), chart.selectedSeries()->pen().color());
            for (int r = 0; r < model.rowCount(); ++r)
                check(QStringLiteral("point %1").arg(r),
                    chart.attemptsSeries()
                        ->pointConfiguration(r)
                        .value(QXYSeries::PointConfiguration::Color)
                        .value<QColor>());
            QVERIFY2(low.isEmpty(), qPrintable(low.join(QLatin1Char('\n'))));
        }
    }

    void commitListStatusFollowsThePalette()
    {
        // The commit list's Status text (kept, pending, failed) on the application's palette.
        const QPalette before = QApplication::palette();
        ExperimentModel model;
        model.resetRows(test::makeRun(QStringLiteral("/r"))->experiments);
        for (const QPalette &palette : { test::lightPalette(), test::darkPalette() }) {
            QApplication::setPalette(palette);
            for (int r = 0; r < model.rowCount(); ++r) {
                const QVariant c = model.index(r, ExperimentModel::StatusColumn).data(Qt::ForegroundRole);
                if (!c.isValid())
                    continue; // the palette's own text colour
                const double ratio
                    = OutcomeColors::contrast(c.value<QColor>(), palette.color(QPalette::Base));
                QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("row %1: %2:1").arg(r).arg(ratio)));
            }
        }
        QApplication::setPalette(before);
    }
};

AK_TEST_CLASS(OutcomeColorsTest)
#include "tst_outcomecolors.moc"
