#include "testregistry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <memory>

// `autokernel-cli bench` as a script would call it: exit codes, messages, the JSON object.
class BenchCliTest : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    static QString python()
    {
        return qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
    }

    struct Run
    {
        int exitCode = -1;
        QString out;
        QString err;
    };

    Run bench(const QStringList &args, int timeoutMs = 120000)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        p.setProcessEnvironment(env);
        p.start(qEnvironmentVariable("AUTOKERNEL_CLI"), QStringList { QStringLiteral("bench") } + args);
        if (!p.waitForFinished(timeoutMs))
            p.kill();
        return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError()) };
    }

    QString writeKernel(const QString &name, const QByteArray &body)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (f.open(QIODevice::WriteOnly))
            f.write(body);
        return path;
    }

    QStringList cpuArgs(const QString &kernel, const QStringList &more = {})
    {
        return QStringList { kernel, QStringLiteral("--device"), QStringLiteral("cpu"),
            QStringLiteral("--quick"), QStringLiteral("--json"), QStringLiteral("--python"), python() }
        + more;
    }

    static QJsonObject parse(const Run &r) { return QJsonDocument::fromJson(r.out.toUtf8()).object(); }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void missingFileIsUsageError()
    {
        const Run r = bench({ QStringLiteral("/no/such/kernel.py") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("kernel file '/no/such/kernel.py' does not exist")),
            qPrintable(r.err));
    }

    void unknownOptionIsUsageError()
    {
        const Run r = bench({ QStringLiteral("--frobnicate"), QStringLiteral("k.py") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("frobnicate")), qPrintable(r.err));
    }

    void badValuesAreUsageErrors()
    {
        const QString k = writeKernel(QStringLiteral("any.py"), "KERNEL_TYPE = 'softmax'\n");
        Run r = bench({ k, QStringLiteral("--device"), QStringLiteral("tpu") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--device must be cpu or cuda")), qPrintable(r.err));
        r = bench({ k, QStringLiteral("--dtype"), QStringLiteral("int4") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--dtype must be fp32, fp16 or bf16")), qPrintable(r.err));
        r = bench({ k, QStringLiteral("--timeout"), QStringLiteral("soon") });
        QCOMPARE(r.exitCode, 2);
        r = bench({});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("expected one KERNEL_PY")), qPrintable(r.err));
    }

    void missingInterpreterIsEnvironmentError()
    {
        const QString k = writeKernel(QStringLiteral("any.py"), "KERNEL_TYPE = 'softmax'\n");
        const Run r = bench({ k, QStringLiteral("--python"), QStringLiteral("/no/such/python3") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("/no/such/python3")), qPrintable(r.err));
    }

    // The machine, not the kernel: no CUDA device in the interpreter is an environment error (exit 2).
    void cudaWithoutCudaIsEnvironmentError()
    {
        QProcess probe;
        probe.start(python(),
            { QStringLiteral("-c"), QStringLiteral("import torch; print(torch.cuda.is_available())") });
        QVERIFY(probe.waitForFinished(120000));
        if (probe.readAllStandardOutput().trimmed() == "True")
            QSKIP("this interpreter sees a CUDA device");
        const Run r
            = bench({ QStringLiteral(AUTOKERNEL_SOURCE_DIR "/agent/python/harness/starters/cpu/softmax.py"),
                QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--json"),
                QStringLiteral("--python"), python() });
        QVERIFY2(r.exitCode == 2, qPrintable(r.out + r.err));
        QVERIFY2(parse(r).value(QStringLiteral("failure")).toString().contains(QStringLiteral("no CUDA")),
            qPrintable(r.out));
    }

    // End to end through the embedded worker and harness, on the CPU starter.
    void cpuStarterIsCorrect()
    {
        const Run r = bench(
            cpuArgs(QStringLiteral(AUTOKERNEL_SOURCE_DIR "/agent/python/harness/starters/cpu/softmax.py")));
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        const QJsonObject o = parse(r);
        QCOMPARE(o.value(QStringLiteral("correct")).toBool(), true);
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(o.value(QStringLiteral("failure")).toString(), QString());
        const QJsonArray stages = o.value(QStringLiteral("stages")).toArray();
        QVERIFY(stages.size() >= 3);
        for (const auto &s : stages)
            QVERIFY2(s.toObject().value(QStringLiteral("passed")).toBool(), qPrintable(r.out));
        for (const char *key : { "latency_us", "ref_latency_us", "speedup", "gbps", "noise_pct" })
            QVERIFY2(o.value(QLatin1String(key)).toDouble() > 0, key);
        QVERIFY(o.contains(QStringLiteral("bound")));
    }

    void wrongKernelIsIncorrect()
    {
        const QString k = writeKernel(QStringLiteral("wrong.py"),
            "KERNEL_TYPE = 'softmax'\n\ndef kernel_fn(x):\n    return x.clone()\n");
        const Run r = bench(cpuArgs(k));
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = parse(r);
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("incorrect"));
        QCOMPARE(o.value(QStringLiteral("correct")).toBool(), false);
        QVERIFY(!o.value(QStringLiteral("failure")).toString().isEmpty());
        QVERIFY(!o.contains(QStringLiteral("latency_us")));
    }

    // Isolation: a hang is cut at the wall-clock limit; a segfaulting kernel becomes a crash result.
    void hangingKernelTimesOut()
    {
        const QString k = writeKernel(QStringLiteral("hang.py"),
            "import time\nKERNEL_TYPE = 'softmax'\n\n"
            "def kernel_fn(x):\n    time.sleep(600)\n");
        const Run r = bench(cpuArgs(k, { QStringLiteral("--timeout"), QStringLiteral("8") }), 60000);
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = parse(r);
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("timeout"));
        QVERIFY(o.value(QStringLiteral("seconds")).toDouble() < 20);
    }

    void crashingKernelIsACrash()
    {
        const QString k = writeKernel(QStringLiteral("crash.py"),
            "import os\nKERNEL_TYPE = 'softmax'\n\n"
            "def kernel_fn(x):\n    os.abort()\n");
        const Run r = bench(cpuArgs(k));
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = parse(r);
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("crash"));
        QVERIFY(!o.value(QStringLiteral("failure")).toString().isEmpty());
    }
};

AK_TEST_CLASS(BenchCliTest)
#include "tst_benchcli.moc"
