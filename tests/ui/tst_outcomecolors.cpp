#include "modelfixture.h"
#include "models/experimentmodel.h"
#include "models/outcomecolors.h"
#include "models/throughputchartmodel.h"
#include "modelverification.h"
#include "modelview.h"
#include "testpalettes.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/modeleffectchart.h"
#include "widgets/modelspeedupchart.h"
#include "widgets/throughputchart.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QLabel>
#include <QLegend>
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

    void modelChartsReadOnLightAndDark()
    {
        // Every colour the Model charts draw with — the projected, measured and original lines of the
        // model speedup chart, the final-set and left-out bars of the Model dock's effect chart — at 3:1
        // on the chart's background, and their text (title, axis labels and titles, legend) at 4.5:1,
        // in a light and a dark palette switched live; the Model dock's parity line when it failed too.
        auto run = test::makeRun(QStringLiteral("/r"));
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-05T01:00:00Z"), Qt::ISODate);
        for (Experiment &e : run->experiments)
            e.finished = t0.addSecs(60 * e.id);
        nlohmann::json failed = test::verificationDict(false);
        failed["parity"]["ok"] = false;
        run->verification = ModelVerification::parse(
            QByteArray::fromStdString(failed.dump()), QStringLiteral("verification.json"), nullptr);
        QVERIFY(run->verification && !run->verification->parityOk);
        ModelSpeedupChart speedup;
        speedup.setSnapshot(*run);
        QVERIFY(speedup.isShowingChart());
        QVERIFY(speedup.measuredSeries()->count() > 0);
        ModelView view; // the dock's effect chart, as the window shows it
        view.setSnapshot(run);
        auto *effect = view.findChild<ModelEffectChart *>(QStringLiteral("ModelEffectChart"));
        QVERIFY(effect && effect->finalSetBars()->count() > 0 && effect->leftOutBars()->count() > 0);
        auto *parity = view.findChild<QLabel *>(QStringLiteral("Parity"));
        QVERIFY(parity);
        // As it was drawn, the left-out grey was too faint on white (2.1:1): the chart must move it.
        QVERIFY(OutcomeColors::contrast(QColor(0xb0, 0xb0, 0xb0), Qt::white) < 3.0);
        for (const QPalette &palette : { test::lightPalette(), test::darkPalette(), test::lightPalette() }) {
            speedup.setPalette(palette);
            view.setPalette(palette);
            const QColor base = palette.color(QPalette::Base);
            QStringList low;
            auto check = [&low](const QString &what, const QColor &c, const QColor &bg, double minimum) {
                const double ratio = OutcomeColors::contrast(c, bg);
                if (ratio < minimum)
                    low << QStringLiteral("%1 %2 on %3: %4:1 (wanted %5:1)")
                               .arg(what, c.name(), bg.name())
                               .arg(ratio)
                               .arg(minimum);
            };
            const double mark = OutcomeColors::kGraphicContrast;
            QCOMPARE(speedup.chart()->series().size(), 3);
            for (QAbstractSeries *s : speedup.chart()->series())
                check(s->name(), static_cast<QLineSeries *>(s)->pen().color(), base, mark);
            for (QBarSet *set : { effect->finalSetBars(), effect->leftOutBars() }) {
                check(set->label(), set->color(), base, mark);
                check(set->label() + QStringLiteral(" border"), set->borderColor(), base, mark);
            }
            for (QChart *chart : { speedup.chart(), effect->chart() }) {
                if (!chart->title().isEmpty())
                    check(QStringLiteral("title"), chart->titleBrush().color(), base, 4.5);
                check(QStringLiteral("legend"), chart->legend()->labelColor(), base, 4.5);
                for (QAbstractAxis *axis : chart->axes()) {
                    check(axis->titleText() + QStringLiteral(" labels"), axis->labelsColor(), base, 4.5);
                    check(axis->titleText(), axis->titleBrush().color(), base, 4.5);
                }
            }
            check(QStringLiteral("parity FAILED"), parity->palette().color(QPalette::WindowText),
                palette.color(QPalette::Window), 4.5);
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
