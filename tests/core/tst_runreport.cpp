#include "gitrepo.h"
#include "runcost.h"
#include "runheadline.h"
#include "runloader.h"
#include "runreport.h"
#include "runstats.h"
#include "runstore.h"
#include "testregistry.h"
#include "ui/modelfixture.h"

#include <QFile>
#include <QHash>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

using namespace ak;

namespace {

// The report parsed back: element counts by class or id, texts by id, every <tr data-kernel>.
struct Parsed
{
    QString error;
    QHash<QString, int> classCount; // "kernelchart" -> 6
    QHash<QString, QString> textById; // "measured" -> "Model speedup, measured1.030×..."
    QStringList kernelRows; // data-kernel of the kernel table's rows, in order
    int circles = 0;
    int timingRows = 0;
    QStringList diffAdds; // "+# attempt 1"
    QString all; // every text node
};

Parsed parse(const QString &html)
{
    Parsed p;
    QXmlStreamReader r(html);
    QStringList openIds; // the id of each open element ("" when none)
    QString table;
    while (!r.atEnd()) {
        r.readNext();
        if (r.isStartElement()) {
            const auto a = r.attributes();
            const QString id = a.value(QStringLiteral("id")).toString();
            openIds << id;
            for (const QString &c :
                a.value(QStringLiteral("class")).toString().split(QLatin1Char(' '), Qt::SkipEmptyParts))
                p.classCount[c] += 1;
            if (r.name() == QLatin1String("table"))
                table = id;
            if (r.name() == QLatin1String("tr") && a.hasAttribute(QStringLiteral("data-kernel")))
                p.kernelRows << a.value(QStringLiteral("data-kernel")).toString();
            if (r.name() == QLatin1String("tr") && table == QLatin1String("timings")
                && openIds.contains(QString()))
                p.timingRows += 1;
            if (r.name() == QLatin1String("circle"))
                ++p.circles;
            if (a.value(QStringLiteral("class")) == QLatin1String("add"))
                p.diffAdds << r.readElementText();
        } else if (r.isEndElement()) {
            openIds.removeLast();
        } else if (r.isCharacters()) {
            p.all += r.text();
            for (const QString &id : openIds)
                if (!id.isEmpty())
                    p.textById[id] += r.text();
        }
    }
    if (r.hasError())
        p.error = QStringLiteral("line %1: %2").arg(r.lineNumber()).arg(r.errorString());
    return p;
}

} // namespace

class RunReportTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void reportOfAVerifiedRun()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY2(test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        { // A description with markup must come out as text, not as markup.
            auto store = RunStore::open(dir.path(), &error);
            QVERIFY2(store, qPrintable(error));
            const Experiment e = store->beginExperiment(QStringLiteral("06-layernorm"),
                "KERNEL_TYPE = \"layernorm\"\n# <b>&amp;\n", QStringLiteral("tune"),
                QStringLiteral("<script>alert(1)</script> & co"), &error);
            QVERIFY2(e.id > 0, qPrintable(error));
            Metrics m;
            m.correct = true;
            m.speedup = 0.7;
            QVERIFY(store->finishExperiment(e.id, ExperimentStatus::Reverted, m, QString(), &error));
        }
        const RunSnapshotPtr run = RunLoader::load(dir.path(), &error);
        QVERIFY2(run, qPrintable(error));
        QString repoError;
        const auto repo = GitRepo::open(dir.path(), &repoError);
        QVERIFY2(repo, qPrintable(repoError));
        const Parsed p = parse(RunReport::html(*run, repo.get(), QDateTime::currentDateTimeUtc()));
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        // The points' colours are the window's (one table in core/experiment.cpp).
        QVERIFY(p.all.contains(QStringLiteral(".pt.reverted { fill: %1; }")
                                   .arg(QLatin1String(outcomeColor(ExperimentOutcome::Reverted)))));
        QVERIFY(p.all.contains(QStringLiteral(".pt.failed { fill: #c62828; }")));

        // Summary: measured from verification.json, projected from the heads, outcome counts.
        QVERIFY2(p.textById[QStringLiteral("measured")].contains(QStringLiteral("1.030×")),
            qPrintable(p.textById[QStringLiteral("measured")]));
        // The projection in two parts (#41): the starters over PyTorch and the loop on top, each
        // saying what it divides by; no single "projected" figure that mixes them.
        const RunHeadline headline = RunHeadline::of(*run);
        QVERIFY(!p.textById.contains(QStringLiteral("projected")));
        QVERIFY2(p.textById[QStringLiteral("starters")].contains(headline.startersText())
                && p.textById[QStringLiteral("starters")].contains(QStringLiteral("÷ with the starters")),
            qPrintable(p.textById[QStringLiteral("starters")]));
        QVERIFY2(p.textById[QStringLiteral("loop")].contains(headline.loopText())
                && p.textById[QStringLiteral("loop")].contains(QStringLiteral("on its own latency")),
            qPrintable(p.textById[QStringLiteral("loop")]));
        QVERIFY(!p.textById.contains(QStringLiteral("recording"))); // not a shipped recording
        QVERIFY2(p.textById[QStringLiteral("experiments")].contains(
                     QStringLiteral("7 kept · 0 pending · 1 reverted")),
            qPrintable(p.textById[QStringLiteral("experiments")]));
        // #43 item 6: the search's cost per experiment, kept kernel and point of the measured speedup.
        QVERIFY2(p.textById[QStringLiteral("cost")].contains(RunCost::of(*run).text()),
            qPrintable(p.textById[QStringLiteral("cost")]));
        QVERIFY(
            p.textById[QStringLiteral("cost")].contains(QStringLiteral("point of model speedup (measured)")));
        // The ranked table in rank order; a chart per kernel; every measured experiment a point.
        QCOMPARE(p.kernelRows,
            (QStringList { QStringLiteral("01-matmul"), QStringLiteral("02-matmul"),
                QStringLiteral("03-matmul"), QStringLiteral("04-matmul"),
                QStringLiteral("05-flash_attention"), QStringLiteral("06-layernorm") }));
        QCOMPARE(p.classCount.value(QStringLiteral("kernelchart")), 6);
        QCOMPARE(p.circles,
            6 + 7 + 1 + 13); // per kernel: baselines, keeps, the reverted one; the timeline: each head change
        QVERIFY(p.textById.contains(QStringLiteral("timeline")));
        // The run-level line: one point per head change, from the original model to today's projection.
        const auto timeline = RunStats::projectedTimeline(*run);
        QCOMPARE(timeline.size(), 13);
        QCOMPARE(timeline.first().second, 1.0);
        QVERIFY(qFuzzyCompare(timeline.last().second, run->projectedSpeedup()));
        // In the order the heads were decided (RunStats::projectedTimeline), drawn over time.
        for (int i = 1; i < timeline.size(); ++i)
            QVERIFY(RunStats::decidedAt(*run->experiment(timeline[i].first))
                >= RunStats::decidedAt(*run->experiment(timeline[i - 1].first)));
        QVERIFY2(p.textById[QStringLiteral("timeline")].contains(QStringLiteral("minutes into the run")),
            qPrintable(p.textById[QStringLiteral("timeline")]));
        QCOMPARE(p.classCount.value(QStringLiteral("reverted")), 1);
        // The model: four timings, the left-out kernels with their reasons, the effects as bars.
        QCOMPARE(p.timingRows, 5); // header + eager, eager + ours, compile, compile + ours
        QVERIFY(p.textById[QStringLiteral("leftout")].contains(
            QStringLiteral("01-matmul: slows the model down")));
        QVERIFY(p.textById[QStringLiteral("leftout")].contains(
            QStringLiteral("05-flash_attention: not plugged")));
        QCOMPARE(p.classCount.value(QStringLiteral("gain")), 4);
        QCOMPARE(p.classCount.value(QStringLiteral("loss")), 1);
        // Diffs: each kernel with a kept change, baseline against head (layernorm's third attempt).
        QVERIFY2(p.diffAdds.contains(QStringLiteral("+# attempt 3")),
            qPrintable(p.diffAdds.join(QLatin1Char('|'))));
        QCOMPARE(p.classCount.value(QStringLiteral("diff")), 4);
        QVERIFY(p.all.contains(QStringLiteral("<script>alert(1)</script> & co"))); // as text
        QCOMPARE(p.classCount.value(QStringLiteral("script")), 0);
    }

    void reportWithoutVerificationOrKeeps()
    {
        QTemporaryDir dir;
        QString error;
        auto store = RunStore::create(dir.path(),
            nlohmann::json { { "model", "tiny" }, { "activity", "cpu" }, { "dtype", "fp32" } }, &error);
        QVERIFY2(store, qPrintable(error));
        KernelRecord k;
        k.rank = 1;
        k.opType = QStringLiteral("softmax");
        k.folder = QStringLiteral("kernels/01-softmax");
        k.share = 1.0;
        QVERIFY2(store->addKernel(k, "KERNEL_TYPE = \"softmax\"\n", &error).id > 0, qPrintable(error));
        const QString out = dir.filePath(QStringLiteral("report.html"));
        QVERIFY2(RunReport::write(dir.path(), out, &error), qPrintable(error));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Parsed p = parse(QString::fromUtf8(f.readAll()));
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QVERIFY(p.textById[QStringLiteral("measured")].contains(QStringLiteral("not verified")));
        QVERIFY(p.textById[QStringLiteral("model")].contains(QStringLiteral("autokernel-cli verify")));
        QVERIFY(p.all.contains(QStringLiteral("No kernel has a kept change yet.")));
    }

    void badPathsNameTheCause()
    {
        QString error;
        QVERIFY(!RunReport::write(QStringLiteral("/nonexistent/run"), QStringLiteral("/tmp/x.html"), &error));
        QVERIFY2(error.contains(QStringLiteral("/nonexistent/run")), qPrintable(error));
        QTemporaryDir dir;
        QVERIFY2(test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        error.clear();
        QVERIFY(!RunReport::write(dir.path(), QStringLiteral("/proc/report.html"), &error));
        QVERIFY2(error.contains(QStringLiteral("/proc/report.html")), qPrintable(error));
    }
};

AK_TEST_CLASS(RunReportTest)
#include "tst_runreport.moc"
