#include "fakeloopcontrol.h"
#include "loopinfo.h"
#include "mainwindow.h"
#include "modelfixture.h"
#include "numberformat.h"
#include "runheadline.h"
#include "runstats.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "testsnapshot.h"
#include "widgets/runsummarybar.h"
#include "widgets/runworkspace.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPointer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ak;

// The strip above the kernel table: the model's measured and projected speedup, the experiments by
// outcome, where the loop runs, on which kernel and at what pace.
class RunSummaryBarTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void countsProjectionAndPace()
    {
        auto run = test::makeRun(QStringLiteral("/runs/x"));
        // Six finishes a minute apart: 5 intervals in 5 minutes = 60 per hour; then one running.
        const QDateTime t0 = QDateTime::fromString(QStringLiteral("2026-12-03T10:00:00Z"), Qt::ISODate);
        for (int i = 0; i < run->experiments.size(); ++i) {
            run->experiments[i].started = t0.addSecs(60 * i - 30);
            run->experiments[i].finished = t0.addSecs(60 * i);
        }
        Experiment running
            = test::experiment(7, QStringLiteral("02-softmax"), ExperimentStatus::Running, 1, 1);
        running.finished = QDateTime();
        run->experiments.append(running);
        run->experimentIndex.insert(7, run->experiments.size() - 1);

        RunSummaryBar bar;
        bar.setSnapshot(*run);
        QCOMPARE(test::named<QLabel>(&bar, "SummaryCounts")->text(),
            QStringLiteral(
                "6 experiments: 2 kept · 1 pending · 1 reverted · 1 failed · 0 rejected · 1 running"));
        // The headline in three parts (#41): starters over PyTorch, the loop on top, the model.
        const RunHeadline headline = RunHeadline::of(*run);
        QCOMPARE(test::named<QLabel>(&bar, "SummaryModel")->text(),
            QStringLiteral("Starters <b>%1</b> · loop <b>%2</b> · model not verified")
                .arg(headline.startersText(), headline.loopText()));
        QVERIFY(headline.startersText() != QStringLiteral("—"));
        QVERIFY(headline.loopText().startsWith(QLatin1Char('+'))); // 01-matmul kept: 100/1.0 → 100/1.5 µs
        QVERIFY2(test::named<QLabel>(&bar, "SummaryModel")->toolTip().contains(QStringLiteral("÷")),
            qPrintable(test::named<QLabel>(&bar, "SummaryModel")->toolTip()));
        QCOMPARE(test::named<QLabel>(&bar, "SummaryLoop")->text(), QStringLiteral("No loop running"));
        bar.setLoop(QStringLiteral("in this window"));
        QCOMPARE(test::named<QLabel>(&bar, "SummaryLoop")->text(),
            QStringLiteral("Loop running in this window · on 02-softmax · 60 experiments/h"));
    }

    void budgetAgentAndSpend()
    {
        auto run = test::makeRun(QStringLiteral("/runs/x"));
        run->experiments[1].tokensIn = 9000;
        run->experiments[1].tokensOut = 2500;
        run->experiments[1].cost = 0.25;
        run->experiments[2].tokensIn = 400;
        run->experiments[2].cost = 0.125;
        const RunStats stats = RunStats::of(*run);
        QCOMPARE(stats.tokensIn, qint64(9400));
        QCOMPARE(stats.tokensOut, qint64(2500));
        QCOMPARE(stats.cost, 0.375);

        LoopInfo info;
        info.pid = 4242;
        info.started = QDateTime::currentDateTimeUtc();
        info.deadline = info.started.addSecs(12 * 60 - 5); // rounds up: 12 min
        info.agent = QStringLiteral("llm (gpt-4.1)");
        run->loop = info;
        RunSummaryBar bar;
        bar.setSnapshot(*run);
        // No loop running: neither budget nor spend is claimed for it.
        QCOMPARE(test::named<QLabel>(&bar, "SummaryLoop")->text(), QStringLiteral("No loop running"));
        bar.setLoop(QStringLiteral("in pid 4242"));
        const QString text = test::named<QLabel>(&bar, "SummaryLoop")->text();
        QVERIFY2(text.startsWith(QStringLiteral("Loop running in pid 4242")), qPrintable(text));
        QVERIFY2(text.endsWith(QStringLiteral(" · 12 min left · llm (gpt-4.1) agent · 11.9k tokens · $0.38")),
            qPrintable(text));

        // A spent budget says so; a loop without a file (started in the window) shows no budget, and an
        // agent that spends nothing no tokens.
        info.deadline = info.started.addSecs(-1);
        run->loop = info;
        for (Experiment &e : run->experiments)
            e.tokensIn = e.tokensOut = 0, e.cost = 0;
        bar.setSnapshot(*run);
        QVERIFY2(test::named<QLabel>(&bar, "SummaryLoop")
                     ->text()
                     .endsWith(QStringLiteral(" · budget spent · llm (gpt-4.1) agent")),
            qPrintable(test::named<QLabel>(&bar, "SummaryLoop")->text()));
        run->loop.reset();
        bar.setSnapshot(*run);
        QVERIFY(!test::named<QLabel>(&bar, "SummaryLoop")->text().contains(QStringLiteral("left")));
        QVERIFY(!test::named<QLabel>(&bar, "SummaryLoop")->text().contains(QStringLiteral("agent")));

        // What the CLI writes is what the loader reads back.
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral(".git")));
        info.maxExperiments = 50;
        QVERIFY(info.write(dir.path()));
        const auto back = LoopInfo::read(dir.path());
        QVERIFY(back);
        QCOMPARE(back->pid, qint64(4242));
        QCOMPARE(back->agent, info.agent);
        QCOMPARE(back->maxExperiments, 50);
        QCOMPARE(back->deadline.toSecsSinceEpoch(), info.deadline.toSecsSinceEpoch());
        LoopInfo::remove(dir.path());
        QVERIFY(!LoopInfo::read(dir.path()));

        // A damaged file (another process's, half written or edited by hand) costs only what is wrong
        // in it: a field of the wrong type reads as absent, and no object is no loop.
        auto writeInfo = [&dir](const QByteArray &bytes) {
            QFile f(LoopInfo::path(dir.path()));
            return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
        };
        QVERIFY(writeInfo(
            R"({"pid": "4242", "agent": 7, "max_experiments": 2.5, "started": "2026-12-06T01:00:00Z"})"));
        const auto typed = LoopInfo::read(dir.path());
        QVERIFY(typed);
        QCOMPARE(typed->pid, qint64(0));
        QVERIFY(typed->agent.isEmpty());
        QCOMPARE(typed->maxExperiments, 0);
        QVERIFY(typed->started.isValid());
        QVERIFY(!typed->deadline.isValid());
        QVERIFY(writeInfo(R"([1, 2])"));
        QVERIFY(!LoopInfo::read(dir.path()));
        QVERIFY(writeInfo(R"({"pid": 42)"));
        QVERIFY(!LoopInfo::read(dir.path()));
    }

    void windowSaysWhereTheLoopRuns()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY2(test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        MainWindow w;
        QPointer<FakeLoopControl> loop;
        w.setLoopFactory([&loop](const QString &, QObject *parent) -> LoopControl * {
            loop = new FakeLoopControl(LoopControl::CanStartStop, parent);
            return loop;
        });
        QSignalSpy loaded(&w, &MainWindow::runLoaded);
        w.openRun(dir.path());
        QTRY_COMPARE(loaded.count(), 1);
        RunSummaryBar *bar = test::named<RunWorkspace>(&w, "RunWorkspace")->summaryBar();
        QVERIFY2(test::named<QLabel>(bar, "SummaryModel")
                     ->text()
                     .contains(QStringLiteral("<b>1.03×</b> measured")),
            qPrintable(test::named<QLabel>(bar, "SummaryModel")->text()));
        QVERIFY(test::named<QLabel>(bar, "SummaryCounts")
                    ->text()
                    .startsWith(QStringLiteral("7 experiments: 7 kept")));
        QCOMPARE(test::named<QLabel>(bar, "SummaryLoop")->text(), QStringLiteral("No loop running"));
        QTRY_VERIFY(test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled());
        test::named<SteeringActions>(&w, "SteeringActions")->start()->trigger();
        QVERIFY(loop);
        loop->setState(LoopControl::State::Running);
        QVERIFY2(test::named<QLabel>(bar, "SummaryLoop")
                     ->text()
                     .startsWith(QStringLiteral("Loop running in this window")),
            qPrintable(test::named<QLabel>(bar, "SummaryLoop")->text()));
        loop->setState(LoopControl::State::Stopped);
        QTRY_COMPARE(test::named<QLabel>(bar, "SummaryLoop")->text(), QStringLiteral("No loop running"));
    }
};

AK_TEST_CLASS(RunSummaryBarTest)
#include "tst_runsummarybar.moc"
