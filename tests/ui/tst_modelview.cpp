// The model view: numbers, chart, empty state; Verify in the background with progress and cancel
// (through a real WorkerClient), Export; and the Model dock and menu of the window.
#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "modelfixture.h"
#include "models/kerneltablemodel.h"
#include "modelview.h"
#include "pythonscripts.h"
#include "runloader.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/emptystate.h"
#include "widgets/logview.h"
#include "widgets/modeleffectchart.h"
#include "widgets/runworkspace.h"
#include "widgets/steeringactions.h"

#include <QBarSet>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QPointer>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>

#include <atomic>

using ak::ModelView;
using ak::VerifyOptions;
using ak::VerifyOutcome;

namespace {

ak::RunSnapshotPtr verifiedRun(bool withCompile)
{
    auto s = ak::test::makeRun(QStringLiteral("/r"));
    s->verification = ak::ModelVerification::parse(
        QByteArray::fromStdString(ak::test::verificationDict(withCompile).dump()),
        QStringLiteral("verification.json"), nullptr);
    return s;
}

// A verify that does what ModelVerifier::verify does with its worker, on a real WorkerClient whose
// op sleeps: onWorker around a blocking request, "cancelled" when cancel() ended it.
VerifyOutcome sleepingVerify(
    const VerifyOptions &options, const ak::WorkerClient::ProgressFn &progress, int delayMs)
{
    QThread::msleep(delayMs); // loading the run, finding Python: a cancel may come before the worker exists
    ak::WorkerClient worker;
    worker.setPython(QStringLiteral("/usr/bin/python3"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("AK_WORKER_TEST"), QStringLiteral("1"));
    worker.setEnvironment(env);
    options.onWorker(&worker);
    const ak::WorkerReply reply
        = worker.request(QStringLiteral("debug.sleep"), { { "seconds", 60 } }, 120000, progress);
    options.onWorker(nullptr);
    VerifyOutcome out;
    out.cancelled = reply.status == ak::WorkerReply::Status::Cancelled;
    out.error = out.cancelled ? QStringLiteral("cancelled") : reply.error;
    return out;
}

} // namespace

class ModelViewTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void projectionTakesEachKernelsHead()
    {
        auto s = ak::test::makeRun(QStringLiteral("/r"));
        // 02-softmax kept nothing, but its baseline starter already runs at 2x PyTorch: verify plugs
        // that head, so the projection counts it; a pending experiment is never a head.
        s->experiments.append(
            ak::test::experiment(7, QStringLiteral("02-softmax"), ak::ExperimentStatus::Baseline, 2.0, 30.0));
        s->experimentIndex.insert(7, int(s->experiments.size()) - 1);
        s->kernels[1].headExperiment = 7;
        QCOMPARE(ModelView::projectedSpeedup(*s),
            1.0 / (1.0 - 0.55 * (1.0 - 1.0 / 1.5) - 0.275 * (1.0 - 1.0 / 2.0)));
    }

    void showsTheNumbers()
    {
        ModelView view;
        view.setSnapshot(verifiedRun(true));
        QVERIFY(view.isShowingVerification());
        QCOMPARE(ak::test::named<QLabel>(&view, "MeasuredSpeedup")->text(), QStringLiteral("1.06×"));
        // Projection: 01-matmul's best kept 1.5x over 55 % of the time; 02-softmax has only a pending one.
        QCOMPARE(ModelView::projectedSpeedup(*verifiedRun(true)), 1.0 / (1.0 - 0.55 * (1.0 - 1.0 / 1.5)));
        QCOMPARE(ak::test::named<QLabel>(&view, "ProjectedSpeedup")->text(), QStringLiteral("1.22×"));
        QCOMPARE(view.timingLabel(0, 0)->text(), QStringLiteral("15.23 ms"));
        QCOMPARE(view.timingLabel(1, 0)->text(), QStringLiteral("14.42 ms"));
        QCOMPARE(view.timingLabel(1, 1)->text(), QStringLiteral("1.06×"));
        QCOMPARE(view.timingLabel(2, 1)->text(), QStringLiteral("1.28×"));
        QCOMPARE(view.timingLabel(3, 2)->text(), QStringLiteral("1.03×")); // compile + ours vs compile
        QVERIFY(view.timingLabel(1, 2)->text().isEmpty());
        QVERIFY(ak::test::named<QLabel>(&view, "CompileSeconds")->text().contains(QStringLiteral("48.2 s")));
        QVERIFY2(ak::test::named<QLabel>(&view, "CompileSeconds")
                     ->text()
                     .contains(QStringLiteral("With torch.compile: compile the model after apply()")),
            qPrintable(ak::test::named<QLabel>(&view, "CompileSeconds")->text()));
        QVERIFY(ak::test::named<QLabel>(&view, "Parity")->text().startsWith(QStringLiteral("Parity: ok")));
        QVERIFY(
            ak::test::named<QLabel>(&view, "Parity")->text().contains(QStringLiteral("seeds 11, 22, 33")));
        const QString env = ak::test::named<QLabel>(&view, "Environment")->text();
        QVERIFY2(env.contains(QStringLiteral("NVIDIA H200"))
                && env.contains(QStringLiteral("torch 2.5.1+cu124"))
                && env.contains(QStringLiteral("Triton 3.1.0"))
                && env.contains(QStringLiteral("took 1 min 37 s")),
            qPrintable(env));

        // Only timed kernels have a bar, largest win on top (Qt Charts' last category).
        ak::ModelEffectChart *chart = ak::test::named<ak::ModelEffectChart>(&view, "ModelEffectChart");
        QVERIFY(chart->isShowingChart());
        QCOMPARE(chart->categories(),
            (QStringList { QStringLiteral("02-softmax  −1.3 %"), QStringLiteral("01-matmul  +4.2 %") }));
        QCOMPARE(chart->finalSetBars()->at(1), 4.2);
        QCOMPARE(chart->finalSetBars()->at(0), 0.0);
        QCOMPARE(chart->leftOutBars()->at(0), -1.3);

        // Everything not in the final set, with its reason.
        QTableWidget *left = ak::test::named<QTableWidget>(&view, "LeftOutTable");
        QCOMPARE(left->rowCount(), 3);
        QCOMPARE(left->item(1, 0)->text(), QStringLiteral("03-layernorm"));
        QCOMPARE(left->item(1, 1)->text(), QStringLiteral("not plugged"));
        QVERIFY(left->item(1, 2)->text().contains(QStringLiteral("eps 1e-06")));
        QCOMPARE(left->item(2, 1)->text(), QStringLiteral("parity ✗"));
    }

    // #40: the mode, and the kernels whose sites inductor's own code runs faster.
    void saysWhereCompileWins()
    {
        nlohmann::json d = ak::test::verificationDict(true);
        auto s = ak::test::makeRun(QStringLiteral("/r"));
        s->verification = ak::ModelVerification::parse(
            QByteArray::fromStdString(d.dump()), QStringLiteral("verification.json"), nullptr);
        ModelView view;
        view.setSnapshot(s);
        QLabel *label = ak::test::named<QLabel>(&view, "CompileSeconds");
        QVERIFY2(label->text().contains(QStringLiteral("chosen in eager mode")), qPrintable(label->text()));
        QVERIFY(!label->text().contains(QStringLiteral("own code is faster")));

        d["mode"] = "compile";
        d["kernels"][1]["versus"] = { { "eager", { { "saved_us", 50.0 }, { "effect_pct", 0.3 } } },
            { "compile", { { "saved_us", -31.5 }, { "effect_pct", -2.6 } } }, { "compile_wins", true } };
        s = ak::test::makeRun(QStringLiteral("/r"));
        s->verification = ak::ModelVerification::parse(
            QByteArray::fromStdString(d.dump()), QStringLiteral("verification.json"), nullptr);
        view.setSnapshot(s);
        QVERIFY2(label->text().contains(QStringLiteral("chosen under torch.compile"))
                && label->text().contains(QStringLiteral(
                    "torch.compile's own code is faster at the sites of: 02-softmax (-31.5 us)")),
            qPrintable(label->text()));
    }

    void withoutTorchCompile()
    {
        ModelView view;
        view.setSnapshot(verifiedRun(false));
        QCOMPARE(view.timingLabel(2, 0)->text(), QStringLiteral("not measured"));
        QVERIFY(
            view.timingLabel(3, 0)->toolTip().contains(QStringLiteral("torch 1.13.1 has no torch.compile")));
        QVERIFY(view.timingLabel(3, 2)->text().isEmpty());
        QVERIFY(ak::test::named<QLabel>(&view, "CompileSeconds")
                    ->text()
                    .contains(QStringLiteral("not measured")));
        QVERIFY(ak::test::named<QLabel>(&view, "Environment")->text().contains(QStringLiteral("no Triton")));
    }

    void emptyStateWithoutVerification()
    {
        ModelView view;
        QVERIFY(!view.isShowingVerification());
        QVERIFY(!view.verifyAction()->isEnabled());
        QVERIFY(!view.verify()); // no run
        view.setSnapshot(ak::test::makeRun(QStringLiteral("/r")));
        QVERIFY(!view.isShowingVerification());
        QCOMPARE(ak::test::named<ak::EmptyState>(&view, "ModelEmptyState")->title(),
            QStringLiteral("Not verified yet — Verify measures the kernels inside the model"));
        QVERIFY(view.verifyAction()->isEnabled());
        QVERIFY(!view.exportAction()->isEnabled());
        QVERIFY(!view.exportTo(QStringLiteral("/tmp/nowhere")));
        view.setSnapshot(verifiedRun(true));
        QVERIFY(view.isShowingVerification());
        QVERIFY(view.exportAction()->isEnabled());
        // Verified, then the file went away (reload): back to the empty state, chart cleared.
        view.setSnapshot(ak::test::makeRun(QStringLiteral("/r")));
        QVERIFY(!view.isShowingVerification());
        QVERIFY(ak::test::named<ak::ModelEffectChart>(&view, "ModelEffectChart")->categories().isEmpty());
    }

    void verifyRunsOffTheGuiThreadWithProgress()
    {
        ModelView view;
        view.setSnapshot(ak::test::makeRun(QStringLiteral("/r")));
        std::atomic<bool> onGuiThread { true };
        QString runDir;
        QThread *gui = QThread::currentThread();
        view.jobs()->setVerifyWork([&](const VerifyOptions &o, const ak::WorkerClient::ProgressFn &progress) {
            onGuiThread = QThread::currentThread() == gui;
            runDir = o.runDir;
            progress(QStringLiteral("parity of 01-matmul"), 0.25);
            QThread::msleep(50);
            progress(QStringLiteral("timing the model"), 0.75);
            QThread::msleep(50);
            VerifyOutcome out;
            out.ok = true;
            out.verification = { { "model_speedup", 1.056 } };
            out.recorded = QStringLiteral("committed");
            return out;
        });
        QSignalSpy values(ak::test::named<QProgressBar>(&view, "ModelProgress"), &QProgressBar::valueChanged);
        QSignalSpy verified(&view, &ModelView::verified);
        QSignalSpy info(&view, &ModelView::info);
        QVERIFY(view.verify());
        QVERIFY(!view.verifyAction()->isEnabled()); // one at a time
        QVERIFY(view.cancelAction()->isEnabled());
        QVERIFY(!view.verify());
        QVERIFY(ak::test::named<QProgressBar>(&view, "ModelProgress")->isVisibleTo(&view));
        QTRY_COMPARE(verified.count(), 1);
        QVERIFY(!onGuiThread);
        QCOMPARE(runDir, QStringLiteral("/r"));
        QCOMPARE(verified.at(0).at(0).toString(), QStringLiteral("/r"));
        bool saw75 = false;
        for (const QList<QVariant> &v : values)
            saw75 = saw75 || v.at(0).toInt() == 75;
        QVERIFY(saw75);
        QVERIFY(info.last().at(0).toString().contains(QStringLiteral("1.06×")));
        QVERIFY(!ak::test::named<QProgressBar>(&view, "ModelProgress")->isVisibleTo(&view));
        QVERIFY(view.verifyAction()->isEnabled());
        QVERIFY(!view.cancelAction()->isEnabled());
    }

    void verifyErrorIsShownAndReported()
    {
        ModelView view;
        view.setSnapshot(ak::test::makeRun(QStringLiteral("/r")));
        view.jobs()->setVerifyWork([](const VerifyOptions &, const ak::WorkerClient::ProgressFn &) {
            VerifyOutcome out;
            out.error = QStringLiteral("/r/model.py changed since it was profiled");
            return out;
        });
        QSignalSpy failed(&view, &ModelView::failed);
        QSignalSpy verified(&view, &ModelView::verified);
        QVERIFY(view.verify());
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("changed since it was profiled")));
        QVERIFY(ak::test::named<QLabel>(&view, "ModelStatus")
                    ->text()
                    .contains(QStringLiteral("changed since it was profiled")));
        QCOMPARE(verified.count(), 0);
    }

    void cancelEndsTheWorker_data()
    {
        QTest::addColumn<int>("delayMs");
        QTest::addColumn<bool>("afterProgress");
        QTest::newRow("while the worker runs") << 0 << true;
        QTest::newRow("before the worker exists") << 400 << false; // WorkerClient drops a cancel while idle
    }

    void cancelEndsTheWorker()
    {
        QFETCH(int, delayMs);
        QFETCH(bool, afterProgress);
        QString error;
        QVERIFY2(!ak::PythonScripts::directory(&error).isEmpty(), qPrintable(error));
        ModelView view;
        view.setSnapshot(ak::test::makeRun(QStringLiteral("/r")));
        view.jobs()->setVerifyWork([delayMs](const VerifyOptions &o, const ak::WorkerClient::ProgressFn &p) {
            return sleepingVerify(o, p, delayMs);
        });
        QSignalSpy progress(view.jobs(), &ak::ModelJobs::verifyProgress);
        QSignalSpy finished(view.jobs(), &ak::ModelJobs::verifyFinished);
        QSignalSpy verified(&view, &ModelView::verified);
        QVERIFY(view.verify());
        if (afterProgress)
            QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1, 20000); // the worker is sleeping in its request
        QElapsedTimer timer;
        timer.start();
        view.cancelAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QVERIFY2(timer.elapsed() < 15000, "the 60 s sleep was not cut short");
        QVERIFY(!view.jobs()->isVerifying());
        const auto outcome = finished.at(0).at(0).value<VerifyOutcome>();
        QVERIFY(outcome.cancelled && !outcome.ok);
        QCOMPARE(outcome.error, QStringLiteral("cancelled"));
        QCOMPARE(verified.count(), 0); // nothing recorded, no reload
        QVERIFY(ak::test::named<QLabel>(&view, "ModelStatus")->text().contains(QStringLiteral("cancelled")));
        QVERIFY(view.verifyAction()->isEnabled());
    }

    void realVerifyIsCancelledAndRecordsNothing()
    {
        // The real ModelVerifier::verify on a run whose model takes a minute to build: Cancel ends
        // the worker's verify op while it builds the model, and nothing reaches the run.
        QTemporaryDir dir;
        const QString model = dir.filePath(QStringLiteral("sleepy.py"));
        QFile f(model);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("import time\n\ndef get_model():\n    time.sleep(120)\n\ndef get_inputs():\n    return []\n");
        f.close();
        const QString runDir = dir.filePath(QStringLiteral("run"));
        const QString python
            = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
        QString error;
        {
            auto store = ak::RunStore::create(runDir,
                { { "model", "sleepy" }, { "model_path", model.toStdString() },
                    { "python", python.toStdString() }, { "activity", "cpu" }, { "dtype", "fp32" } },
                &error);
            QVERIFY2(store, qPrintable(error));
            ak::KernelRecord k;
            k.rank = 1;
            k.opType = QStringLiteral("softmax");
            k.folder = QStringLiteral("kernels/01-softmax");
            k.share = 1;
            QVERIFY2(store->addKernel(k, "KERNEL_TYPE = \"softmax\"\n", &error).id != 0, qPrintable(error));
            QVERIFY2(
                store->writeProfile(
                    { { "kernels",
                        { { { "folder", "kernels/01-softmax" },
                            { "call_sites", { { { "module", "" }, { "function", "softmax" } } } } } } } },
                    &error),
                qPrintable(error));
        }
        const ak::RunSnapshotPtr before = ak::RunLoader::load(runDir, &error);
        QVERIFY2(before, qPrintable(error));
        ModelView view;
        view.setSnapshot(before);
        QSignalSpy progress(view.jobs(), &ak::ModelJobs::verifyProgress);
        QSignalSpy failed(&view, &ModelView::failed);
        QVERIFY(view.verify());
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1 || failed.count() > 0, 60000);
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
        QCOMPARE(progress.at(0).at(0).toString(), QStringLiteral("running the original model"));
        view.cancelVerify();
        QTRY_VERIFY_WITH_TIMEOUT(!view.jobs()->isVerifying(), 20000);
        QVERIFY2(ak::test::named<QLabel>(&view, "ModelStatus")->text().contains(QStringLiteral("cancelled")),
            qPrintable(ak::test::named<QLabel>(&view, "ModelStatus")->text()));
        QVERIFY(!QFile::exists(runDir + QStringLiteral("/verification.json")));
        QCOMPARE(ak::RunLoader::load(runDir)->bestCommit, before->bestCommit);
    }

    void exportRunsInTheBackground()
    {
        ModelView view;
        view.setSnapshot(verifiedRun(true));
        ak::ExportOptions seen;
        view.jobs()->setExportWork([&seen](const ak::ExportOptions &o) {
            seen = o;
            ak::ExportOutcome out;
            out.ok = true;
            out.packageDir = o.outDir + QStringLiteral("/autokernel_kernels");
            out.kernels = 1;
            out.modelSpeedup = 1.056;
            return out;
        });
        QSignalSpy info(&view, &ModelView::info);
        QVERIFY(view.exportTo(QStringLiteral("/tmp/dist")));
        QVERIFY(!view.exportAction()->isEnabled()); // while it runs
        QTRY_COMPARE(info.count(), 1);
        QCOMPARE(seen.runDir, QStringLiteral("/r"));
        QCOMPARE(seen.outDir, QStringLiteral("/tmp/dist"));
        QVERIFY(info.at(0).at(0).toString().contains(
            QStringLiteral("/tmp/dist/autokernel_kernels with 1 kernel(s)")));
        QVERIFY(view.exportAction()->isEnabled());

        view.jobs()->setExportWork([](const ak::ExportOptions &) {
            ak::ExportOutcome out;
            out.error = QStringLiteral("cannot create /proc/x");
            return out;
        });
        QSignalSpy failed(&view, &ModelView::failed);
        QVERIFY(view.exportTo(QStringLiteral("/proc/x")));
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY(ak::test::named<QLabel>(&view, "ModelStatus")
                    ->text()
                    .contains(QStringLiteral("cannot create /proc/x")));
    }

    void windowHasModelDockMenuAndColumn()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY2(ak::test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        ak::MainWindow w;
        auto *dock = w.findChild<QDockWidget *>(QStringLiteral("ModelDock"));
        QVERIFY(dock && dock->widget() == ak::test::named<ak::ModelView>(&w, "ModelView"));
        QCOMPARE(w.dockWidgetArea(dock), Qt::RightDockWidgetArea);
        auto *menu = w.menuBar()->findChild<QMenu *>(QStringLiteral("ModelMenu"));
        QVERIFY(menu);
        QVERIFY(menu->actions().contains(ak::test::named<ak::ModelView>(&w, "ModelView")->verifyAction()));
        QVERIFY(menu->actions().contains(ak::test::named<ak::ModelView>(&w, "ModelView")->exportAction()));
        QVERIFY(!ak::test::named<ak::ModelView>(&w, "ModelView")->verifyAction()->isEnabled()); // no run yet

        QSignalSpy loaded(&w, &ak::MainWindow::runLoaded);
        w.openRun(dir.path());
        QTRY_COMPARE(loaded.count(), 1);
        QVERIFY(ak::test::named<ak::ModelView>(&w, "ModelView")->isShowingVerification());
        QCOMPARE(ak::test::named<QLabel>(ak::test::named<ak::ModelView>(&w, "ModelView"), "MeasuredSpeedup")
                     ->text(),
            QStringLiteral("1.03×"));
        QCOMPARE(ak::test::named<QLabel>(ak::test::named<ak::ModelView>(&w, "ModelView"), "ProjectedSpeedup")
                     ->text(),
            QStringLiteral("1.04×"));
        ak::KernelTableModel *table = ak::test::named<ak::RunWorkspace>(&w, "RunWorkspace")->kernelModel();
        QCOMPARE(table->index(5, ak::KernelTableModel::InModelColumn).data().toString(),
            QStringLiteral("+0.8 % ✓"));
        QCOMPARE(table->index(0, ak::KernelTableModel::InModelColumn).data().toString(),
            QStringLiteral("−2.4 % left out"));

        // A finished verify reloads the run; its error reaches the log.
        ak::test::named<ak::ModelView>(&w, "ModelView")
            ->jobs()
            ->setVerifyWork([](const VerifyOptions &, const ak::WorkerClient::ProgressFn &) {
                VerifyOutcome out;
                out.ok = true;
                out.recorded = QStringLiteral("committed");
                return out;
            });
        ak::test::named<ak::ModelView>(&w, "ModelView")->verifyAction()->trigger();
        QTRY_COMPARE(loaded.count(), 2);
        ak::test::named<ak::ModelView>(&w, "ModelView")
            ->jobs()
            ->setVerifyWork([](const VerifyOptions &, const ak::WorkerClient::ProgressFn &) {
                VerifyOutcome out;
                out.error = QStringLiteral("no usable Python: none of the candidates can import torch");
                return out;
            });
        ak::test::named<ak::ModelView>(&w, "ModelView")->verifyAction()->trigger();
        QTRY_VERIFY(ak::test::named<ak::LogView>(&w, "LogView")
                        ->toPlainText()
                        .contains(QStringLiteral("error: verify %1: no usable Python").arg(dir.path())));
    }

    void verifiesWhenTheWindowsLoopEndsOnItsOwn()
    {
        // Model ▸ Verify When the Loop Ends: the window's `run --verify-at-end`. A loop that finishes
        // on its own is verified; one the user stopped, or with the option off, is not.
        QTemporaryDir dir;
        QString error;
        QVERIFY2(ak::test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        ak::MainWindow w;
        QPointer<FakeLoopControl> loop;
        w.setLoopFactory([&loop](const QString &, QObject *parent) -> ak::LoopControl * {
            loop = new FakeLoopControl(ak::LoopControl::CanStartStop, parent);
            return loop;
        });
        std::atomic<int> verifies { 0 };
        ak::test::named<ak::ModelView>(&w, "ModelView")
            ->jobs()
            ->setVerifyWork([&verifies](const VerifyOptions &, const ak::WorkerClient::ProgressFn &) {
                ++verifies;
                VerifyOutcome out;
                out.error = QStringLiteral("fake verify");
                return out;
            });
        QAction *atEnd = ak::test::named<ak::ModelView>(&w, "ModelView")->verifyAtEndAction();
        auto *menu = w.menuBar()->findChild<QMenu *>(QStringLiteral("ModelMenu"));
        QVERIFY(menu && menu->actions().contains(atEnd));
        QVERIFY(atEnd->isCheckable());
        QSignalSpy loaded(&w, &ak::MainWindow::runLoaded);
        w.openRun(dir.path());
        QTRY_COMPARE(loaded.count(), 1);

        const auto runOnce = [&](bool userStops) {
            QTRY_VERIFY2(ak::test::named<ak::SteeringActions>(&w, "SteeringActions")->start()->isEnabled(),
                qPrintable(ak::test::named<ak::SteeringActions>(&w, "SteeringActions")->start()->toolTip()));
            ak::test::named<ak::SteeringActions>(&w, "SteeringActions")->start()->trigger();
            QVERIFY(loop);
            loop->setState(ak::LoopControl::State::Running);
            if (userStops)
                loop->setState(ak::LoopControl::State::Stopping);
            loop->setState(ak::LoopControl::State::Stopped);
            QTRY_VERIFY(!loop); // handed back to the run directory
            QTRY_VERIFY(!ak::test::named<ak::ModelView>(&w, "ModelView")->jobs()->isVerifying());
        };
        atEnd->setChecked(false);
        runOnce(false);
        QCOMPARE(verifies.load(), 0);
        atEnd->setChecked(true);
        runOnce(true);
        QCOMPARE(verifies.load(), 0);
        runOnce(false);
        QCOMPARE(verifies.load(), 1);
        QVERIFY(ak::test::named<ak::LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("the loop ended: verifying the kept kernels")));
        atEnd->setChecked(false); // remembered in QSettings: leave it off
    }
};

AK_TEST_CLASS(ModelViewTest)
#include "tst_modelview.moc"
