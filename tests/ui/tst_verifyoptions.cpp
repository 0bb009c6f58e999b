#include "dialogs/verifyoptionsdialog.h"
#include "modelfixture.h"
#include "modelview.h"
#include "runloader.h"
#include "services/modeljobs.h"
#include "testregistry.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QListWidget>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>

using namespace ak;

// Model ▸ Verify With Options…: the CLI's verify flags in a dialog, handed to the same verify.
class VerifyOptionsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void optionsReachTheVerify()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY2(test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        const RunSnapshotPtr run = RunLoader::load(dir.path(), &error);
        QVERIFY2(run, qPrintable(error));
        QSettings().remove(QStringLiteral("verify"));

        VerifyOptionsDialog dialog;
        dialog.setRun(*run);
        QCOMPARE(dialog.kernelList()->count(), 6);
        const VerifyOptions defaults = dialog.options();
        QVERIFY(defaults.kernels.isEmpty()); // all checked: every kernel
        QCOMPARE(defaults.seeds, VerifyOptions().seeds);
        QVERIFY(defaults.compile);
        QCOMPARE(defaults.runDir, run->runDir);

        for (int i = 0; i < dialog.kernelList()->count(); ++i)
            dialog.kernelList()->item(i)->setCheckState(Qt::Unchecked);
        dialog.accept(); // nothing to verify: refused, stays open
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        QVERIFY(dialog.errorText().contains(QStringLiteral("at least one kernel")));
        dialog.kernelList()->item(2)->setCheckState(Qt::Checked);
        dialog.kernelList()->item(5)->setCheckState(Qt::Checked);
        dialog.deviceBox()->setCurrentIndex(dialog.deviceBox()->findData(QStringLiteral("cpu")));
        dialog.seedsBox()->setValue(2);
        dialog.roundsBox()->setValue(5);
        dialog.compileBox()->setChecked(false);
        dialog.allowChangedBox()->setChecked(true);
        const VerifyOptions o = dialog.options();
        QCOMPARE(o.kernels, (QStringList { QStringLiteral("03-matmul"), QStringLiteral("06-layernorm") }));
        QCOMPARE(o.device, QStringLiteral("cpu"));
        QCOMPARE(o.seeds, 2);
        QCOMPARE(o.rounds, 5);
        QVERIFY(!o.compile);
        QVERIFY(o.allowChangedModel);
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        VerifyOptionsDialog again; // seeds, rounds, compile remembered
        QCOMPARE(again.seedsBox()->value(), 2);
        QCOMPARE(again.roundsBox()->value(), 5);
        QVERIFY(!again.compileBox()->isChecked());
        QSettings().remove(QStringLiteral("verify"));

        // The model view hands the options to its verify job.
        ModelView view;
        view.setSnapshot(run);
        VerifyOptions got;
        std::atomic<bool> ran { false };
        view.jobs()->setVerifyWork([&](const VerifyOptions &options, const WorkerClient::ProgressFn &) {
            got = options;
            ran = true;
            VerifyOutcome out;
            out.error = QStringLiteral("fake");
            return out;
        });
        QVERIFY(view.verifyWithOptionsAction()->isEnabled());
        QVERIFY(view.verify(o));
        QTRY_VERIFY(ran.load());
        QTRY_VERIFY(!view.jobs()->isVerifying());
        QCOMPARE(got.kernels, o.kernels);
        QVERIFY(!got.compile);
        QCOMPARE(got.runDir, run->runDir);
    }

    // #40: the set chosen under torch.compile; compile mode cannot switch compiling off.
    void modeReachesTheVerifyAndForcesCompile()
    {
        QSettings().remove(QStringLiteral("verify"));
        VerifyOptionsDialog dialog;
        QCOMPARE(dialog.options().mode, QStringLiteral("eager"));
        dialog.compileBox()->setChecked(false);
        dialog.modeBox()->setCurrentIndex(dialog.modeBox()->findData(QStringLiteral("compile")));
        QVERIFY(dialog.compileBox()->isChecked() && !dialog.compileBox()->isEnabled());
        const VerifyOptions o = dialog.options();
        QCOMPARE(o.mode, QStringLiteral("compile"));
        QVERIFY(o.compile);
        QVERIFY(ModelVerifier::modeError(o.mode, QStringLiteral("mode"), o.compile).isEmpty());
        dialog.accept();
        VerifyOptionsDialog again; // remembered
        QCOMPARE(again.options().mode, QStringLiteral("compile"));
        again.modeBox()->setCurrentIndex(again.modeBox()->findData(QStringLiteral("eager")));
        QVERIFY(again.compileBox()->isEnabled());
        QSettings().remove(QStringLiteral("verify"));
        QVERIFY(ModelVerifier::modeError(QStringLiteral("fast"), QStringLiteral("--mode"))
                    .contains(QStringLiteral("--mode must be eager or compile")));
        QVERIFY(ModelVerifier::modeError(QStringLiteral("compile"), QStringLiteral("--mode"), false)
                    .contains(QStringLiteral("--no-compile")));
    }
};

AK_TEST_CLASS(VerifyOptionsTest)
#include "tst_verifyoptions.moc"
