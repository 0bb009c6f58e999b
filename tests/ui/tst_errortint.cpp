// The one error red of the dialogs: readable on light and dark windows, following a theme switched
// live, and given back to the palette's text colour when the error is gone.
#include "dialogs/agentsettingsdialog.h"
#include "dialogs/verifyoptionsdialog.h"
#include "runsnapshot.h"
#include "testregistry.h"
#include "widgets/errortint.h"
#include "widgets/sandboxstatus.h"

#include <QLabel>
#include <QPalette>
#include <QTest>
#include <QVBoxLayout>
#include <QWidget>
#include <cmath>

using namespace ak;

namespace {

QPalette themed(const QColor &window, const QColor &text)
{
    QPalette p;
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    return p;
}

QColor textOf(const QLabel *label)
{
    return label->palette().color(QPalette::WindowText);
}

// WCAG's contrast ratio of two colours (1 .. 21).
double contrast(const QColor &a, const QColor &b)
{
    auto lum = [](const QColor &c) {
        auto ch = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF());
    };
    const double la = lum(a), lb = lum(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class ErrorTintTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Each red reads on its window: at least WCAG AA's 4.5:1, on white and on a dark grey.
    void readableOnLightAndDark()
    {
        const QPalette light = themed(Qt::white, Qt::black);
        const QPalette dark = themed(QColor(0x2b, 0x2b, 0x2b), QColor(0xee, 0xee, 0xee));
        QVERIFY(ErrorTint::color(light) != ErrorTint::color(dark));
        QVERIFY2(contrast(ErrorTint::color(light), Qt::white) >= 4.5,
            qPrintable(QString::number(contrast(ErrorTint::color(light), Qt::white))));
        QVERIFY2(contrast(ErrorTint::color(dark), QColor(0x2b, 0x2b, 0x2b)) >= 4.5,
            qPrintable(QString::number(contrast(ErrorTint::color(dark), QColor(0x2b, 0x2b, 0x2b)))));
    }

    // A tinted label follows its window's theme when it is switched live, both ways; untinted, it
    // takes the theme's own text colour again and keeps following it.
    void followsTheThemeLive()
    {
        const QPalette light = themed(Qt::white, Qt::black);
        const QPalette dark = themed(QColor(0x2b, 0x2b, 0x2b), QColor(0xee, 0xee, 0xee));
        QWidget window;
        window.setPalette(light);
        auto *label = new QLabel(QStringLiteral("Could not save"), &window);
        (new QVBoxLayout(&window))->addWidget(label);

        ErrorTint::apply(label);
        ErrorTint::apply(label); // twice: still one tint
        QCOMPARE(label->findChildren<ErrorTint *>().size(), 1);
        QCOMPARE(textOf(label), ErrorTint::color(light));
        window.setPalette(dark);
        QCOMPARE(textOf(label), ErrorTint::color(dark));
        window.setPalette(light);
        QCOMPARE(textOf(label), ErrorTint::color(light));

        ErrorTint::apply(label, false);
        QVERIFY(label->findChildren<ErrorTint *>().isEmpty());
        QCOMPARE(textOf(label), QColor(Qt::black));
        window.setPalette(dark);
        QCOMPARE(textOf(label), QColor(0xee, 0xee, 0xee));
    }

    // The dialogs' error lines are tinted by it (not by a red of their own).
    void dialogsUseIt()
    {
        AgentSettingsDialog agent;
        for (const char *name : { "error", "tuneMemoryError" }) {
            auto *label = agent.findChild<QLabel *>(QString::fromLatin1(name));
            QVERIFY2(label, name);
            QVERIFY2(label->findChild<ErrorTint *>(), name);
        }
        // The status bar's sandbox warning: tinted while kernels run unsandboxed, not once they are.
        RunSnapshot run;
        Experiment e;
        e.metrics.sandbox = QStringLiteral("none: bwrap not found");
        run.experiments << e;
        SandboxStatus sandbox;
        sandbox.showRun(run);
        QVERIFY(sandbox.findChild<ErrorTint *>());
        QVERIFY(sandbox.font().bold());
        run.experiments[0].metrics.sandbox = QStringLiteral("bubblewrap 0.8.0");
        sandbox.showRun(run);
        QVERIFY(!sandbox.findChild<ErrorTint *>());
        QVERIFY(!sandbox.font().bold());
        VerifyOptionsDialog verify;
        auto *verifyError = verify.findChild<QLabel *>(QStringLiteral("VerifyOptionsError"));
        QVERIFY(verifyError && verifyError->findChild<ErrorTint *>());
    }
};

AK_TEST_CLASS(ErrorTintTest)
#include "tst_errortint.moc"
