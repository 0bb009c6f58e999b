#include "experimentmodel.h"
#include "outcomecolors.h"
#include "testpalettes.h"
#include "testregistry.h"
#include "testsnapshot.h"

#include <QApplication>
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
