// Profiles every bundled example on the CPU through the real worker, and feeds bad model files to
// `autokernel-cli profile`. Needs a Python with torch: $AUTOKERNEL_TEST_PYTHON.
#include "contractshapes.h"
#include "gpudatabase.h"
#include "modelprofiler.h"
#include "testregistry.h"

#include <QDir>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>

using namespace ak;

namespace {

QString python()
{
    return qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
}

QString fixture(const QString &name)
{
    return QStringLiteral(AUTOKERNEL_SOURCE_DIR "/tests/data/profiler/") + name;
}

QSet<QString> opTypes(const ProfileReport &r)
{
    QSet<QString> s;
    for (const KernelRecord &k : r.kernels)
        s.insert(k.opType);
    return s;
}

// The op type of the row that swallowed `op` at some site (#40 regions: "covers"), or empty.
QString coveredBy(const ProfileReport &r, const QString &op)
{
    for (int i = 0; i < r.kernels.size(); ++i)
        for (const nlohmann::json &c : r.calls[i].covers)
            if (QString::fromStdString(c.value("op", "")) == op)
                return r.kernels[i].opType;
    return QString();
}

} // namespace

class ModelProfileTest : public QObject
{
    Q_OBJECT
    WorkerClient *m_worker = nullptr;

    ProfileReport profile(const QString &model, const DeviceInfo &device)
    {
        ModelProfiler::Options o;
        o.model = model;
        o.device = QStringLiteral("cpu");
        o.warmup = 1;
        o.iterations = 1;
        o.timeoutMs = 120000;
        ProfileReport r;
        QString error, traceback;
        const bool ok = ModelProfiler::profile(*m_worker, o, device, &r, &error, &traceback);
        if (!ok)
            qWarning().noquote() << error << traceback;
        return ok ? r : ProfileReport();
    }

    static void checkRanking(const ProfileReport &r)
    {
        QVERIFY(!r.kernels.isEmpty());
        double shares = 0, total = 0;
        for (int i = 0; i < r.kernels.size(); ++i) {
            const KernelRecord &k = r.kernels[i];
            QCOMPARE(k.rank, i + 1);
            if (i > 0)
                QVERIFY(k.timeUs <= r.kernels[i - 1].timeUs);
            QVERIFY(k.calls >= 0);
            QVERIFY(!k.opType.isEmpty());
            shares += k.share;
            total += k.timeUs;
        }
        QVERIFY2(qAbs(shares - 1.0) < 1e-6, qPrintable(QString::number(shares)));
        QVERIFY(qAbs(total - r.totalUs) < 1e-6 * total);
        QCOMPARE(r.kernels.size(), r.calls.size());
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_worker = new WorkerClient(this);
        m_worker->setPython(python());
        QString error;
        QVERIFY2(m_worker->start(&error), qPrintable(error));
    }

    void gpt2()
    {
        const ProfileReport r = profile(QStringLiteral("gpt2"), DeviceInfo());
        checkRanking(r);
        QCOMPARE(r.activity, QStringLiteral("cpu"));
        QCOMPARE(r.kernels.first().opType, QStringLiteral("matmul"));
        const auto types = opTypes(r);
        for (const char *t : { "matmul", "layernorm", "add_layernorm", "elementwise" })
            QVERIFY2(types.contains(QLatin1String(t)), t);
        // The MLP's GELU takes c_fc's output: its time is the linear's (a matmul with an activation).
        QCOMPARE(coveredBy(r, QStringLiteral("gelu")), QStringLiteral("matmul"));
        // torch < 2 has no SDPA: the example's explicit form must show a softmax; torch 2 shows attention.
        QVERIFY(
            types.contains(QStringLiteral("softmax")) || types.contains(QStringLiteral("flash_attention")));
    }

    void llama()
    {
        const ProfileReport r = profile(QStringLiteral("llama"), DeviceInfo());
        checkRanking(r);
        // On the CPU the SwiGLU region (its three GEMMs) outweighs the LM head.
        QVERIFY(r.kernels.first().opType == QLatin1String("fused_mlp")
            || r.kernels.first().opType == QLatin1String("matmul"));
        const auto types = opTypes(r);
        for (const char *t : { "matmul", "rmsnorm", "rotary_embedding", "fused_mlp", "add_rmsnorm" })
            QVERIFY2(types.contains(QLatin1String(t)), t);
        QCOMPARE(coveredBy(r, QStringLiteral("add")), QStringLiteral("add_rmsnorm"));
        for (int i = 0; i < r.kernels.size(); ++i) // the region row carries the weights: a folder can be made
            if (r.kernels[i].opType == QLatin1String("fused_mlp"))
                QCOMPARE(int(ContractShapes::of(QStringLiteral("fused_mlp"), r.calls[i]).size()), 4);
    }

    void rotaryWrittenAsFunctions()
    {
        // transformers' Llama applies its rotary through module-level functions inside the attention
        // module; on the H200's torch 2.11 the profiler lost the Python stacks and these ops became
        // elementwise and copy rows (13% of the model that no kernel folder covered).
        const ProfileReport r = profile(fixture(QStringLiteral("fn_rotary.py")), DeviceInfo());
        bool found = false;
        for (int i = 0; i < r.kernels.size(); ++i) {
            if (r.kernels[i].opType != QLatin1String("rotary_embedding"))
                continue;
            found = true;
            QVERIFY2(r.calls[i].functions.contains(QStringLiteral("apply_rotary_pos_emb")),
                qPrintable(r.calls[i].functions.join(QLatin1Char(','))));
            for (const auto &site : r.calls[i].callSites)
                QVERIFY2(QString::fromStdString(site.value("module", "")).endsWith(QLatin1String("0"))
                        || QString::fromStdString(site.value("module", "")).endsWith(QLatin1String("1")),
                    site.dump().c_str()); // the attention modules "0" and "1", not "<model>"
        }
        QVERIFY2(found, "no rotary_embedding row");
        for (int i = 0; i < r.kernels.size(); ++i) // and no cat of the rotary left over as a copy
            if (r.kernels[i].atenOp == QLatin1String("aten::cat"))
                QCOMPARE(r.kernels[i].opType, QStringLiteral("rotary_embedding"));
    }

    void bert()
    {
        const ProfileReport r = profile(QStringLiteral("bert"), DeviceInfo());
        checkRanking(r);
        QCOMPARE(r.kernels.first().opType, QStringLiteral("matmul"));
        const auto types = opTypes(r);
        for (const char *t : { "matmul", "layernorm", "add_layernorm", "softmax", "cross_entropy" })
            QVERIFY2(types.contains(QLatin1String(t)), t);
        QCOMPARE(coveredBy(r, QStringLiteral("gelu")), QStringLiteral("matmul"));
    }

    void cnn()
    {
        const ProfileReport r = profile(QStringLiteral("cnn"), DeviceInfo());
        checkRanking(r);
        QCOMPARE(r.kernels.first().opType, QStringLiteral("conv"));
        QVERIFY(opTypes(r).contains(QStringLiteral("batchnorm")));
    }

    void amdahlAgainstAGpuRoof()
    {
        // A CPU-timed profile ranked against an H100's roof: every roofed kernel obeys Amdahl's law.
        const DeviceInfo h100
            = GpuDatabase::toDevice(*GpuDatabase::builtin().byKey(QStringLiteral("h100-sxm")));
        ProfileReport r = profile(fixture(QStringLiteral("tiny_mlp.py")), DeviceInfo());
        checkRanking(r);
        QVERIFY(r.modelPath.endsWith(QStringLiteral("tiny_mlp.py")));
        // Re-rank the same rows against the H100 (as the GUI does when the target device changes).
        nlohmann::json raw = r.toJson();
        ProfileReport g;
        QString error;
        QVERIFY2(ProfileReport::fromWorker(raw, h100, &g, &error), qPrintable(error));
        int roofed = 0;
        for (const KernelRecord &k : g.kernels) {
            if (k.floorUs <= 0)
                continue;
            ++roofed;
            QVERIFY(qAbs(k.maxSpeedup - k.timeUs / (k.floorUs * std::max(1, k.calls))) < 1e-9 * k.maxSpeedup);
            QVERIFY(k.modelSpeedupAt90 >= 1.0);
            QVERIFY(k.modelSpeedupAt90 <= 1.0 / (1.0 - k.share) + 1e-9); // Amdahl's limit
        }
        QVERIFY(roofed > 0);
        // The first linear: x[64,256] @ W^T[256,1024] -> 2*64*256*1024 FLOPs; fp32 on an H100.
        bool found = false;
        for (int i = 0; i < g.kernels.size(); ++i) {
            if (g.kernels[i].atenOp == QLatin1String("aten::addmm") && g.calls[i].shapes.size() >= 3
                && g.calls[i].shapes[2] == std::vector<int64_t> { 256, 1024 }) {
                QCOMPARE(g.kernels[i].flops, 2.0 * 64 * 256 * 1024);
                QCOMPARE(g.kernels[i].bytes, (64.0 * 256 + 256.0 * 1024 + 64.0 * 1024) * 4);
                const double expect = std::max(2.0 * 64 * 256 * 1024 / 66.9e12,
                                          (64.0 * 256 + 256.0 * 1024 + 64.0 * 1024) * 4 / 3350e9)
                    * 1e6;
                QVERIFY(qAbs(g.kernels[i].floorUs - expect) < 1e-9);
                found = true;
            }
        }
        QVERIFY(found);
        QVERIFY(g.projected(int(g.kernels.size())) >= g.projected(1));
    }

    void aModuleOpTakesTheModelsDtype()
    {
        // A bf16 model's RMSNorm upcasts (x.float().pow(2).mean()): its aten ops see fp32, but the
        // module, which is what a kernel replaces, gets bf16. A Linear's mm keeps its own dtype.
        const nlohmann::json raw = { { "dtype", "bf16" }, { "model", "m" },
            { "kernels",
                { { { "name", "elementwise_kernel" }, { "aten_op", "aten::pow" }, { "module", "RMSNorm" },
                      { "dtypes", { "fp32" } }, { "shapes", { { 8, 64 } } }, { "time_us", 10.0 },
                      { "calls", 1 } },
                    { { "name", "gemm" }, { "aten_op", "aten::mm" }, { "module", "Linear" },
                        { "dtypes", { "fp32", "fp32" } }, { "shapes", { { 8, 64 }, { 64, 64 } } },
                        { "time_us", 20.0 }, { "calls", 1 } } } } };
        ProfileReport r;
        QString error;
        QVERIFY2(ProfileReport::fromWorker(raw, DeviceInfo(), &r, &error), qPrintable(error));
        QCOMPARE(r.kernels.size(), 2);
        for (const KernelRecord &k : r.kernels) {
            if (k.atenOp == QLatin1String("aten::pow")) {
                QCOMPARE(k.opType, QStringLiteral("rmsnorm"));
                QCOMPARE(k.dtype, QStringLiteral("bf16"));
            } else {
                QCOMPARE(k.dtype, QStringLiteral("fp32"));
            }
        }
    }

    void badModelFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expect");
        QTest::newRow("syntax error") << "bad_syntax.py"
                                      << "bad_syntax.py:4: syntax error";
        QTest::newRow("raises on import") << "raises_on_import.py"
                                          << "refuses to load";
        QTest::newRow("no get_model") << "no_get_model.py"
                                      << "does not define get_model()";
        QTest::newRow("forward raises") << "forward_raises.py"
                                        << "shape mismatch in Broken.forward";
    }

    void badModelFiles()
    {
        QFETCH(QString, file);
        QFETCH(QString, expect);
        QTemporaryDir tmp;
        const QString out = tmp.filePath(QStringLiteral("run"));
        QDir().mkpath(out);
        QFile marker(out + QStringLiteral("/keep.txt"));
        QVERIFY(marker.open(QIODevice::WriteOnly));
        marker.write("user data");
        marker.close();
        QProcess cli;
        cli.start(qEnvironmentVariable("AUTOKERNEL_CLI"),
            { QStringLiteral("profile"), QStringLiteral("--model"), fixture(file), QStringLiteral("--out"),
                out, QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--python"),
                python() });
        QVERIFY(cli.waitForFinished(120000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QCOMPARE(cli.exitCode(), 1);
        QVERIFY2(err.contains(expect), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("Traceback")), qPrintable(err)); // the Python traceback is shown
        QCOMPARE(QDir(out).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden),
            QStringList { QStringLiteral("keep.txt") });
    }

    void modelThatNeverFinishesTimesOut()
    {
        QTemporaryDir tmp;
        const QString out = tmp.filePath(QStringLiteral("run"));
        QProcess cli;
        cli.start(qEnvironmentVariable("AUTOKERNEL_CLI"),
            { QStringLiteral("profile"), QStringLiteral("--model"), fixture(QStringLiteral("hangs.py")),
                QStringLiteral("--out"), out, QStringLiteral("--device"), QStringLiteral("cpu"),
                QStringLiteral("--python"), python(), QStringLiteral("--timeout"), QStringLiteral("4"),
                QStringLiteral("--warmup"), QStringLiteral("0") });
        QVERIFY(cli.waitForFinished(120000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QCOMPARE(cli.exitCode(), 1);
        QVERIFY2(err.contains(QStringLiteral("did not finish within 4 s")), qPrintable(err));
        QVERIFY(!QFileInfo::exists(out));
    }

    void cliCreatesRun()
    {
        QTemporaryDir tmp;
        const QString out = tmp.filePath(QStringLiteral("run"));
        QProcess cli;
        cli.start(qEnvironmentVariable("AUTOKERNEL_CLI"),
            { QStringLiteral("profile"), QStringLiteral("--model"), fixture(QStringLiteral("tiny_mlp.py")),
                QStringLiteral("--out"), out, QStringLiteral("--device"), QStringLiteral("cpu"),
                QStringLiteral("--python"), python(), QStringLiteral("--iterations"), QStringLiteral("1") });
        QVERIFY(cli.waitForFinished(120000));
        const QString stdoutText = QString::fromUtf8(cli.readAllStandardOutput());
        QVERIFY2(cli.exitCode() == 0, qPrintable(QString::fromUtf8(cli.readAllStandardError())));
        QVERIFY(stdoutText.contains(QStringLiteral("matmul")));
        QFile f(out + QStringLiteral("/profile.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(f.readAll().toStdString());
        QCOMPARE(j["format"].get<std::string>(), std::string("autokernel-profile"));
        QVERIFY(!j["kernels"].empty());
        QCOMPARE(j["kernels"][0]["rank"].get<int>(), 1);
        // Every row says where in the model it ran; every matmul row names the folder that covers it.
        QSet<QString> modules;
        int matmulRows = 0;
        for (const auto &row : j["kernels"]) {
            QVERIFY(row.contains("call_sites"));
            for (const auto &site : row["call_sites"])
                modules.insert(QString::fromStdString(site["module"].get<std::string>()));
            if (row["op_type"] == "matmul" && row["aten_op"] == "aten::addmm") {
                ++matmulRows;
                QVERIFY2(row.contains("folder"), row.dump().c_str());
                const auto &site = row["call_sites"][0];
                QCOMPARE(site["module_class"].get<std::string>(), std::string("Linear"));
                QCOMPARE(site["function"].get<std::string>(), std::string("linear"));
                QVERIFY(site["calls"].get<double>() >= 1);
            }
        }
        QVERIFY(matmulRows >= 1);
        // nn.Sequential(Linear, GELU, Linear): the Linears are modules "0" and "2".
        QVERIFY2(modules.contains(QStringLiteral("0")) && modules.contains(QStringLiteral("2")),
            qPrintable(QStringList(modules.values()).join(QLatin1Char(','))));
        // A second profile into the same run is refused before any work.
        QProcess again;
        again.start(qEnvironmentVariable("AUTOKERNEL_CLI"),
            { QStringLiteral("profile"), QStringLiteral("--model"), QStringLiteral("gpt2"),
                QStringLiteral("--out"), out, QStringLiteral("--python"), python() });
        QVERIFY(again.waitForFinished(60000));
        QCOMPARE(again.exitCode(), 2);
        QVERIFY(
            QString::fromUtf8(again.readAllStandardError()).contains(QStringLiteral("already holds a run")));
    }
};

AK_TEST_CLASS(ModelProfileTest)
#include "tst_modelprofile.moc"
