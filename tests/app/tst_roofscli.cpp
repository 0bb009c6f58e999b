#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

// `autokernel-cli doctor` measures the device's roofs on first use and reads them from the cache
// after (#43 item 1): on the CPU, the CPU's copy bandwidth and fp32 matmul throughput.
class RoofsCliTest : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_cache;

    QString doctor(const QStringList &more)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_cache.path());
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QString()); // the CPU's roofs, on any machine
        p.setProcessEnvironment(env);
        const QString python
            = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
        p.start(qEnvironmentVariable("AUTOKERNEL_CLI"),
            QStringList { QStringLiteral("doctor"), QStringLiteral("--python"), python } + more);
        p.waitForFinished(240000);
        return QString::fromUtf8(p.readAllStandardOutput());
    }

    static QString roofsLine(const QString &out)
    {
        for (const QString &line : out.split(QLatin1Char('\n')))
            if (line.contains(QLatin1String(" roofs: ")))
                return line;
        return {};
    }

    nlohmann::json cache()
    {
        QFile f(m_cache.filePath(QStringLiteral("autokernel/roofs.json")));
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
    }

private Q_SLOTS:
    void doctorMeasuresOnceThenReadsTheCache()
    {
        const QString first = roofsLine(doctor({}));
        QVERIFY2(first.startsWith(QLatin1String("ok       roofs: copy ")), qPrintable(first));
        QVERIFY2(first.contains(QStringLiteral(" GB/s · fp32 matmul ")), qPrintable(first));
        QVERIFY2(!first.contains(QLatin1String("cached")), qPrintable(first));
        const nlohmann::json c = cache();
        QVERIFY(c.is_object());
        QCOMPARE(int(c.size()), 1);
        const nlohmann::json &entry = c.begin().value();
        QVERIFY(entry["bandwidth_gbs"].get<double>() > 0);
        QVERIFY(entry["tflops"]["fp32"].get<double>() > 0);
        QVERIFY(QString::fromStdString(c.begin().key()).contains(QLatin1String("dtype=fp32")));

        const QString again = roofsLine(doctor({}));
        QVERIFY2(again.contains(QLatin1String(", cached)")), qPrintable(again));
        QCOMPARE(again.section(QLatin1String(" (measured"), 0, 0),
            first.section(QLatin1String(" (measured"), 0, 0));

        const QString measured = roofsLine(doctor({ QStringLiteral("--measure-roofs") }));
        QVERIFY2(!measured.contains(QLatin1String("cached")), qPrintable(measured));
        QVERIFY(cache().begin().value()["measured_at"] >= entry["measured_at"]);
    }

    void aBadDtypeIsNamed()
    {
        const QString out = doctor({ QStringLiteral("--dtype"), QStringLiteral("int3") });
        const QString line = roofsLine(out);
        QVERIFY2(line.startsWith(QLatin1String("warning  roofs: ")) && line.contains(QLatin1String("'int3'")),
            qPrintable(out));
    }

    // status says what a run's numbers are against: the roofs its loop measured (roofs.json), both
    // PyTorch baselines and the judge of each head (#43 items 1, 2, 7).
    void statusShowsRoofsBaselinesAndJudges()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath(QStringLiteral("run"));
        QVERIFY(ak::test::makeRunDir(dir, { { "model", "tiny.py" } },
            { ak::test::testKernel(
                1, QStringLiteral("softmax"), "BASE = 1\n", QStringLiteral("softmax"), 0.5) }));
        {
            QString error;
            auto store = ak::RunStore::open(dir, &error);
            QVERIFY2(store, qPrintable(error));
            const QString kernel = store->state().kernels.front().folder;
            const ak::Experiment e = store->beginExperiment(
                kernel, "X = 2\n", QStringLiteral("tune"), QStringLiteral("try"), &error);
            QVERIFY2(e.id != 0, qPrintable(error));
            ak::Metrics m;
            m.correct = true;
            m.latencyUs = 10;
            m.refLatencyUs = 20;
            m.speedup = 2.0;
            m.pctPeak = 91.0;
            m.pctPeakSpec = 81.8;
            m.roof = QStringLiteral("measured");
            m.compileNote = QStringLiteral("not available (torch 1.13.1 has no torch.compile)");
            m.judge = QStringLiteral("0123456789ab");
            m.isolation = QStringLiteral("bubblewrap+cgroup v2");
            QVERIFY2(store->finishExperiment(e.id, ak::ExperimentStatus::Kept, m, QString(), &error),
                qPrintable(error));
        }
        QFile roofs(QDir(dir).filePath(QStringLiteral("roofs.json")));
        QVERIFY(roofs.open(QIODevice::WriteOnly));
        roofs.write(R"({"cpu": {"bandwidth_gbs": 11.5, "tflops": {"fp32": 0.0043}, "key": "k",
            "measured_at": "2026-12-07T13:00:00Z"}})");
        roofs.close();

        const ak::test::CliResult j
            = ak::test::runCli({ QStringLiteral("status"), dir, QStringLiteral("--json") });
        QCOMPARE(j.exitCode, 0);
        const nlohmann::json o = nlohmann::json::parse(j.out.toStdString());
        QCOMPARE(o["measured_roofs"]["bandwidth_gbs"].get<double>(), 11.5);
        QVERIFY(o["judges"] == nlohmann::json::array({ "0123456789ab" }));
        const nlohmann::json &head = o["kernels"][0]["head_metrics"];
        QCOMPARE(head["judge"].get<std::string>(), std::string("0123456789ab"));
        QCOMPARE(head["isolation"].get<std::string>(), std::string("bubblewrap+cgroup v2"));
        QCOMPARE(head["compile"].get<std::string>(),
            std::string("not available (torch 1.13.1 has no torch.compile)"));
        QCOMPARE(head["pct_peak_spec"].get<double>(), 81.8);
        QCOMPARE(o["kernels"][0]["best_torch_speedup"].get<double>(), 2.0);

        const ak::test::CliResult t = ak::test::runCli({ QStringLiteral("status"), dir });
        QVERIFY2(t.out.contains(QStringLiteral("roofs    copy 11.5 GB/s · fp32 matmul 0.0043 TFLOP/s")),
            qPrintable(t.out));
        QVERIFY2(t.out.contains(QStringLiteral("n/a")) && t.out.contains(QStringLiteral("91.0 / 81.8 spec")),
            qPrintable(t.out));
    }
};

AK_TEST_CLASS(RoofsCliTest)
#include "tst_roofscli.moc"
