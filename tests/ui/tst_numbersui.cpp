#include "models/experimentmodel.h"
#include "roofsaction.h"
#include "runstatuslabels.h"
#include "testregistry.h"

#include <QAction>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QWidget>

using namespace ak;

// What a number is against, in the window (#43; docs/numbers.md): an experiment names its judge and
// both roofs, its speedup both PyTorch baselines; the status bar the device's measured roofs.
class NumbersUiTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void anExperimentSaysWhatJudgedItAndAgainstWhat()
    {
        Experiment e;
        e.id = 4;
        e.kernel = QStringLiteral("01-softmax");
        e.status = ExperimentStatus::Kept;
        Metrics &m = e.metrics;
        m.correct = true;
        m.latencyUs = 10.0;
        m.refLatencyUs = 20.0;
        m.speedup = 2.0;
        m.pctPeak = 91.0;
        m.pctPeakSpec = 81.8;
        m.roof = QStringLiteral("measured");
        m.bound = QStringLiteral("memory");
        m.compileLatencyUs = 8.0;
        m.compileSpeedup = 0.8;
        m.compileNote = QStringLiteral("max-autotune (compiled in 31.0 s)");
        m.judge = QStringLiteral("0123456789ab");
        m.isolation = QStringLiteral("bubblewrap+cgroup v2");
        ExperimentModel model;
        model.resetRows({ e });
        const auto tip = [&](int column) { return model.index(0, column).data(Qt::ToolTipRole).toString(); };
        QVERIFY2(tip(ExperimentModel::StatusColumn)
                     .contains(QStringLiteral("judge 0123456789ab, bubblewrap+cgroup v2")),
            qPrintable(tip(ExperimentModel::StatusColumn)));
        const QString roof = tip(ExperimentModel::RoofColumn);
        QVERIFY2(roof.contains(QStringLiteral("measurably reaches")) && roof.contains(QStringLiteral("81.8"))
                && roof.contains(QStringLiteral("91.0")),
            qPrintable(roof));
        QVERIFY2(tip(ExperimentModel::SpeedupColumn).contains(QStringLiteral("over torch.compile")),
            qPrintable(tip(ExperimentModel::SpeedupColumn)));

        e.metrics.compileSpeedup = e.metrics.compileLatencyUs = std::nan("");
        e.metrics.compileNote = QStringLiteral("not available (torch 1.13.1 has no torch.compile)");
        model.resetRows({ e });
        QVERIFY2(tip(ExperimentModel::SpeedupColumn).contains(QStringLiteral("torch.compile: not available")),
            qPrintable(tip(ExperimentModel::SpeedupColumn)));
    }

    void theStatusBarShowsTheMeasuredRoofs()
    {
        QWidget window;
        RunStatusLabels labels(&window);
        RunSnapshot s;
        s.config.device.name = QStringLiteral("NVIDIA H100 80GB HBM3");
        s.config.device.available = true;
        labels.showRun(s);
        QVERIFY(!labels.runDevice()->text().contains(QStringLiteral("measured")));
        s.config.device.measured.bandwidthGBs = 3010;
        s.config.device.measured.tflops[size_t(Precision::BF16)] = 701;
        labels.showRun(s);
        QVERIFY2(labels.runDevice()->text().contains(
                     QStringLiteral("measured roofs: copy 3010 GB/s · bf16 matmul 701")),
            qPrintable(labels.runDevice()->text()));
    }

    // Loop ▸ Measure Device Roofs measures this machine's device (the CPU here) off the GUI thread.
    void theWindowActionMeasuresTheRoofs()
    {
        QTemporaryDir cache;
        qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
        qputenv("AUTOKERNEL_PYTHON",
            qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3")).toUtf8());
        RoofsAction roofs;
        QSignalSpy measured(&roofs, &RoofsAction::measured);
        QSignalSpy failed(&roofs, &RoofsAction::failed);
        roofs.action()->trigger();
        QVERIFY(!roofs.action()->isEnabled()); // one measurement at a time
        QTRY_VERIFY_WITH_TIMEOUT(measured.count() + failed.count() == 1, 180000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        const QString text = measured.first().first().toString();
        QVERIFY2(
            text.startsWith(QStringLiteral("measured roofs of ")) && text.contains(QStringLiteral(" GB/s")),
            qPrintable(text));
        QVERIFY(QFile::exists(cache.filePath(QStringLiteral("autokernel/roofs.json"))));
        QVERIFY(roofs.action()->isEnabled());
        qunsetenv("XDG_CACHE_HOME");
        qunsetenv("AUTOKERNEL_PYTHON");
    }
};

AK_TEST_CLASS(NumbersUiTest)
#include "tst_numbersui.moc"
