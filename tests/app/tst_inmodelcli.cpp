// #38 item 5 as a user meets it: `autokernel-cli run` on the CPU checks a keep inside the model while the
// loop runs (the worker's real `inmodel` op, the sandboxed model runner), records it in inmodel.json, and
// `status` shows it in text and --json; `--in-model-checks 0` switches the checks off.
#include "runloader.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

using namespace ak;
using json = nlohmann::json;

class InModelCliTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    test::CliResult cli(const QStringList &args, int timeoutMs = 300000)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        return test::runProgram(test::cliPath(), args, timeoutMs, env);
    }

    // A fresh run of tests/data/profiler/tiny_mlp.py (two matmuls and a GELU) in `name`.
    QString profiled(const QString &name)
    {
        const QString dir = m_dir.filePath(name);
        const test::CliResult r = cli({ QStringLiteral("profile"), QStringLiteral("--model"),
            QStringLiteral(AUTOKERNEL_SOURCE_DIR "/tests/data/profiler/tiny_mlp.py"), QStringLiteral("--out"),
            dir, QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--python"),
            test::testPython() });
        if (r.exitCode != 0)
            return qWarning("%s", qPrintable(r.err)), QString();
        // Goals off: the CPU's measured roofs would retire the matmuls before any experiment.
        const test::CliResult rules = cli({ QStringLiteral("rules"), dir, QStringLiteral("--roof-pct"),
            QStringLiteral("0"), QStringLiteral("--speedup-over-baseline"), QStringLiteral("0") });
        return rules.exitCode == 0 ? dir : (qWarning("%s", qPrintable(rules.err)), QString());
    }

    test::CliResult tune(const QString &dir, const QStringList &extra = {})
    {
        return cli(
            QStringList { QStringLiteral("run"), dir, QStringLiteral("--agent"), QStringLiteral("tune"),
                QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--quick"),
                QStringLiteral("--seed"), QStringLiteral("1"), QStringLiteral("--experiments"),
                QStringLiteral("4"), QStringLiteral("--python"), test::testPython() }
            + extra);
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void aKeepIsCheckedInTheModelDuringTheRun()
    {
        const QString dir = profiled(QStringLiteral("on"));
        QVERIFY(!dir.isEmpty());
        // The tune agent's steps on tiny_mlp's matmuls (block sizes off the starter's) usually keep
        // within four experiments, but a keep must clear the CPU's timing noise, and only a keep that
        // is not slower than PyTorch beyond the noise is checked in the model (a slower one can only
        // show its loss there; the CPU matmul starter often sits at 0.98x MKL). The run goes on, four
        // at a time, until such a keep comes or nothing is left to do.
        test::CliResult r;
        QString said;
        RunSnapshotPtr s;
        int firstKeep = 0;
        int slowerKeeps = 0;
        for (int round = 0; round < 4 && firstKeep == 0; ++round) {
            r = tune(dir);
            said += r.out + r.err;
            if (r.exitCode == 2 && r.err.contains(QStringLiteral("nothing left to do")))
                break;
            QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
            s = RunLoader::load(dir);
            QVERIFY(s);
            slowerKeeps = 0;
            for (const Experiment &e : s->experiments) {
                if (e.status != ExperimentStatus::Kept)
                    continue;
                const bool slower = e.metrics.clearlySlowerThanTorch();
                slowerKeeps += slower ? 1 : 0;
                if (firstKeep == 0 && !slower)
                    firstKeep = e.id;
                else if (slower) // slower than PyTorch beyond the noise: never checked
                    QVERIFY2(!s->inModel.latest(e.kernel) || s->inModel.latest(e.kernel)->experiment != e.id,
                        qPrintable(
                            QStringLiteral("keep #%1 at %2x was checked").arg(e.id).arg(e.metrics.speedup)));
            }
        }
        QVERIFY(s);
        if (firstKeep == 0) {
            if (slowerKeeps == 0)
                QSKIP("no experiment cleared this machine's timing noise in 16 tries: no keep to check");
            // Only keeps slower than PyTorch: none was checked, and the run said why.
            QVERIFY2(s->inModel.isEmpty(), qPrintable(said));
            QVERIFY2(said.contains(QStringLiteral("not checked in the model: still slower than PyTorch")),
                qPrintable(said));
            return;
        }
        QVERIFY2(!s->inModel.isEmpty(), qPrintable(r.out + r.err));
        const InModelCheck &c = s->inModel.checks.first();
        QCOMPARE(c.experiment, firstKeep); // the first keep is always checked
        QVERIFY2(c.plugged && c.parityOk, qPrintable(c.summary()));
        QVERIFY2(std::isfinite(c.effectPct) && std::isfinite(c.limitPct), qPrintable(c.summary()));
        QVERIFY(c.seconds > 0);
        QVERIFY2(r.out.contains(QStringLiteral("inside the model"))
                || r.err.contains(QStringLiteral("inside the model")),
            qPrintable(r.out));
        QVERIFY(!QFile::exists(QDir(dir).filePath(QStringLiteral("verification.json"))));

        const test::CliResult text = cli({ QStringLiteral("status"), dir });
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        QVERIFY2(text.out.contains(QStringLiteral("in model: "))
                && text.out.contains(QStringLiteral("alone vs eager")),
            qPrintable(text.out));
        const test::CliResult j = cli({ QStringLiteral("status"), dir, QStringLiteral("--json") });
        QVERIFY2(j.exitCode == 0, qPrintable(j.err));
        const json st = json::parse(j.out.toStdString(), nullptr, false);
        bool shown = false;
        for (const json &k : st["kernels"])
            if (k.contains("in_model")) {
                shown = true;
                QCOMPARE(k["in_model"]["experiment"].get<int>(), firstKeep);
                QVERIFY(k["in_model"]["checks"].get<int>() >= 1);
                QVERIFY(k["in_model"].contains("misses_in_a_row"));
            }
        QVERIFY2(shown, j.out.left(2000).toUtf8().constData());
    }

    void zeroSwitchesTheChecksOff()
    {
        const QString dir = profiled(QStringLiteral("off"));
        QVERIFY(!dir.isEmpty());
        const test::CliResult r = tune(dir, { QStringLiteral("--in-model-checks"), QStringLiteral("0") });
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY(!QFile::exists(QDir(dir).filePath(InModelChecks::fileName())));
        const test::CliResult bad = tune(dir, { QStringLiteral("--in-model-checks"), QStringLiteral("150") });
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(QStringLiteral("--in-model-checks")), qPrintable(bad.err));
    }
};

AK_TEST_CLASS(InModelCliTest)
#include "tst_inmodelcli.moc"
