#include "amdahl.h"
#include "contractshapes.h"
#include "gpudatabase.h"
#include "roofline.h"
#include "testregistry.h"

using namespace ak;

namespace {

OpCall op(const QString &aten, std::vector<std::vector<int64_t>> shapes, QStringList dtypes)
{
    OpCall c;
    c.atenOp = aten;
    c.kernelName = aten;
    c.shapes = std::move(shapes);
    c.dtypes = std::move(dtypes);
    return c;
}

DeviceInfo h100()
{
    return GpuDatabase::toDevice(*GpuDatabase::builtin().byKey(QStringLiteral("h100-sxm")));
}

KernelRecord rec(double timeUs, int calls, double floorUs)
{
    KernelRecord k;
    k.timeUs = timeUs;
    k.calls = calls;
    k.floorUs = floorUs;
    return k;
}

} // namespace

class RooflineTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void matmulIsComputeBound()
    {
        const auto r = Roofline::estimate(
            op("aten::mm", { { 4096, 4096 }, { 4096, 4096 } }, { "bf16", "bf16" }), "matmul", "bf16", h100());
        QVERIFY(r.known);
        QCOMPARE(r.flops, 2.0 * 4096.0 * 4096.0 * 4096.0);
        QCOMPARE(r.bytes, 3.0 * 4096.0 * 4096.0 * 2.0);
        // 137.44 GFLOP / 989.4 TFLOP/s = 138.91 us (memory would be 100.7 MB / 3.35 TB/s = 30.0 us).
        QVERIFY2(qAbs(r.floorUs - 138.91) < 0.05, qPrintable(QString::number(r.floorUs)));
        QCOMPARE(r.bound, QStringLiteral("compute"));
    }

    void matmulOperandForms()
    {
        // addmm: bias first. linear: W is [N, K] and x's leading dims fold into M.
        const auto addmm = Roofline::work(
            op("aten::addmm", { { 256 }, { 128, 64 }, { 64, 256 }, {}, {} }, { "fp32", "fp32", "fp32" }),
            "matmul", "fp32");
        QCOMPARE(addmm.flops, 2.0 * 128 * 256 * 64);
        const auto linear = Roofline::work(
            op("aten::linear", { { 2, 64, 128 }, { 256, 128 }, { 256 } }, { "fp32", "fp32", "fp32" }),
            "matmul", "fp32");
        QCOMPARE(linear.flops, 2.0 * 128 * 256 * 128);
        QCOMPARE(linear.bytes, (128.0 * 128 + 128.0 * 256 + 128.0 * 256) * 4);
        const auto bmm = Roofline::work(
            op("aten::bmm", { { 8, 64, 32 }, { 8, 32, 64 } }, { "fp32", "fp32" }), "matmul", "fp32");
        QCOMPARE(bmm.flops, 2.0 * 8 * 64 * 64 * 32);
        QCOMPARE(bmm.bytes, (8.0 * 64 * 32 + 8.0 * 32 * 64 + 8.0 * 64 * 64) * 4);
    }

    void softmaxIsMemoryBound()
    {
        const auto r = Roofline::estimate(
            op("aten::_softmax", { { 4096, 4096 }, {}, {} }, { "bf16", "", "" }), "softmax", "bf16", h100());
        QCOMPARE(r.bytes, 2.0 * 4096 * 4096 * 2);
        QCOMPARE(r.flops, 5.0 * 4096 * 4096);
        QVERIFY2(qAbs(r.floorUs - 67108864.0 / 3350e9 * 1e6) < 1e-6, qPrintable(QString::number(r.floorUs)));
        QCOMPARE(r.bound, QStringLiteral("memory"));
    }

    void attentionHalvesForCausalAndCountsGqaBytes()
    {
        OpCall c = op("aten::scaled_dot_product_attention",
            { { 2, 4, 64, 32 }, { 2, 2, 64, 32 }, { 2, 2, 64, 32 }, {}, {}, {}, {} },
            { "bf16", "bf16", "bf16" });
        const auto full = Roofline::work(c, "flash_attention", "bf16");
        QCOMPARE(full.flops, 4.0 * 2 * 4 * 64 * 64 * 32);
        QCOMPARE(full.bytes, (2.0 * 4 * 64 * 32 + 2 * (2.0 * 2 * 64 * 32) + 2.0 * 4 * 64 * 32) * 2);
        c.concreteInputs = { QVariant(), QVariant(), QVariant(), QVariant(), 0.0, true, QVariant() };
        const auto causal = Roofline::work(c, "flash_attention", "bf16");
        QCOMPARE(causal.flops, full.flops / 2);
        // What torch 2.11 recorded for cuDNN attention on an H200 (GPT-2 example): is_causal is argument 10.
        OpCall cudnn = op("aten::_cudnn_attention_forward",
            { { 8, 16, 1024, 64 }, { 8, 16, 1024, 64 }, { 8, 16, 1024, 64 } }, { "bf16", "bf16", "bf16" });
        cudnn.concreteInputs = { QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), QVariant(),
            1024.0, 1024.0, false, 0.0, true, false, QVariant() };
        QCOMPARE(Roofline::work(cudnn, "flash_attention", "bf16").flops, 4.0 * 8 * 16 * 1024 * 1024 * 64 / 2);
    }

    void normsAndElementwise()
    {
        const auto ln
            = Roofline::work(op("aten::native_layer_norm", { { 4096, 2048 }, {}, { 2048 }, { 2048 }, {} },
                                 { "fp16", "", "fp16", "fp16", "" }),
                "layernorm", "fp16");
        QCOMPARE(ln.flops, 8.0 * 4096 * 2048);
        QCOMPARE(ln.bytes, (2.0 * 4096 * 2048 + 2 * 2048) * 2);
        const auto add = Roofline::work(
            op("aten::add", { { 4, 1024 }, { 1024 }, {} }, { "fp32", "fp32", "" }), "elementwise", "fp32");
        QCOMPARE(add.flops, 4096.0);
        QCOMPARE(add.bytes, (4096.0 + 1024 + 4096) * 4);
        const auto ce = Roofline::work(
            op("aten::cross_entropy_loss", { { 4096, 32000 }, { 4096 } }, { "bf16", "int64" }),
            "cross_entropy", "bf16");
        QCOMPARE(ce.flops, 4.0 * 4096 * 32000);
        QCOMPARE(ce.bytes, (4096.0 * 32000 + 4096) * 2);
    }

    void noRoofWithoutPeaks()
    {
        DeviceInfo cpu;
        cpu.vendor = QStringLiteral("cpu");
        const auto r = Roofline::estimate(
            op("aten::mm", { { 64, 64 }, { 64, 64 } }, { "fp32", "fp32" }), "matmul", "fp32", cpu);
        QVERIFY(!r.known);
        QCOMPARE(r.floorUs, 0.0);
        QVERIFY(!r.why.isEmpty());
        // A precision the GPU lacks gives no roof either (fp8 on an A100).
        DeviceInfo a100
            = GpuDatabase::toDevice(*GpuDatabase::builtin().byKey(QStringLiteral("a100-sxm-80gb")));
        RooflineEstimate w = Roofline::work(
            op("aten::mm", { { 64, 64 }, { 64, 64 } }, { "fp32", "fp32" }), "matmul", "fp32");
        QVERIFY(!Roofline::floor(w, Precision::FP8, a100).known);
        QVERIFY(Roofline::floor(w, Precision::FP32, a100).known);
    }

    void amdahlHandComputed()
    {
        // 1000 us total: A 600 us (2 calls, floor 100 us each), B 300 us (floor 150), C 100 us (no roof).
        QVector<KernelRecord> ks = { rec(300, 1, 150), rec(100, 3, 0), rec(600, 2, 100) };
        Amdahl::rank(ks, 0.9);
        QCOMPARE(ks[0].rank, 1);
        QCOMPARE(ks[0].timeUs, 600.0);
        QCOMPARE(ks[0].share, 0.6);
        QCOMPARE(ks[2].share, 0.1);
        QCOMPARE(ks[0].maxSpeedup, 3.0); // 600 / (2 x 100)
        QCOMPARE(ks[1].maxSpeedup, 2.0); // 300 / 150
        QCOMPARE(ks[2].maxSpeedup, 0.0); // unknown: nothing claimed
        QCOMPARE(ks[2].modelSpeedupAt90, 1.0);
        // A at 90% of its roof: 200 / 0.9 = 222.2 us -> 1000 / (400 + 222.2) = 1.6071
        QVERIFY(qAbs(ks[0].modelSpeedupAt90 - 1000.0 / (400.0 + 200.0 / 0.9)) < 1e-9);
        QVERIFY(qAbs(ks[0].modelSpeedupAt90 - 1.60714) < 1e-5);
        // B: 1000 / (700 + 166.7) = 1.1538
        QVERIFY(qAbs(ks[1].modelSpeedupAt90 - 1.15385) < 1e-5);
        // Top-2 together: 1000 / (1000 - 377.8 - 133.3) = 2.0455; C adds nothing.
        QVERIFY(qAbs(Amdahl::projectedSpeedup(ks, 2) - 2.04545) < 1e-5);
        QCOMPARE(Amdahl::projectedSpeedup(ks, 3), Amdahl::projectedSpeedup(ks, 2));
        QCOMPARE(Amdahl::projectedSpeedup(ks, 0), 1.0);
    }

    void amdahlNeverClaimsASlowdownTarget()
    {
        // Already faster than 90% of its roof would allow: no gain, not a loss.
        QCOMPARE(Amdahl::modelSpeedup(1000, 100, 95, 0.9), 1.0);
        QVector<KernelRecord> ks = { rec(100, 1, 95) };
        Amdahl::rank(ks);
        QCOMPARE(Amdahl::projectedSpeedup(ks, 1), 1.0);
    }

    void contractShapesForExtract()
    {
        using S = ContractShapes::Shape;
        auto shapes = ContractShapes::of(
            "matmul", op("aten::addmm", { { 256 }, { 128, 64 }, { 64, 256 }, {}, {} }, {}));
        QCOMPARE(shapes, (std::vector<S> { { 128, 64 }, { 64, 256 } }));
        shapes = ContractShapes::of("matmul", op("aten::linear", { { 2, 64, 128 }, { 256, 128 } }, {}));
        QCOMPARE(shapes, (std::vector<S> { { 128, 128 }, { 128, 256 } }));
        QVERIFY(ContractShapes::of("matmul", op("aten::copy_", { { 8, 64 }, { 8, 64 }, {} }, {})).empty());
        QVERIFY(ContractShapes::of("rmsnorm", op("aten::rsqrt", { { 2, 64, 1 } }, {})).empty());
        shapes
            = ContractShapes::of("rotary_embedding", op("aten::mul", { { 2, 4, 64, 16 }, { 64, 16 } }, {}));
        QCOMPARE(shapes, (std::vector<S> { { 2, 4, 64, 32 }, { 64, 16 }, { 64, 16 } }));
    }

    void contractShapesForBatchedMatmul()
    {
        // Hand-written attention: q @ k^T as the 4-D matmul and as the bmm it dispatches to: one folder's
        // shapes, the leading dims flattened into the batch (B's logical [K, N], whatever its layout).
        using S = ContractShapes::Shape;
        const OpCall scores = op("aten::matmul", { { 2, 12, 64, 16 }, { 2, 12, 16, 64 } }, {});
        QVERIFY(ContractShapes::batchedRight(scores));
        const std::vector<S> want { { 24, 64, 16 }, { 24, 16, 64 } };
        QCOMPARE(ContractShapes::of("bmm", scores), want);
        const OpCall bmm = op("aten::bmm", { { 24, 64, 16 }, { 24, 16, 64 } }, {});
        QVERIFY(ContractShapes::batchedRight(bmm));
        QCOMPARE(ContractShapes::of("bmm", bmm), want);
        QCOMPARE(ContractShapes::of(
                     "bmm", op("aten::baddbmm", { { 24, 64, 64 }, { 24, 64, 16 }, { 24, 16, 64 } }, {})),
            want);
        // B shared by every row (x @ W, a linear): a matmul folder's, not a bmm one.
        const OpCall linear = op("aten::matmul", { { 2, 64, 16 }, { 16, 32 } }, {});
        QVERIFY(!ContractShapes::batchedRight(linear));
        QVERIFY(!ContractShapes::batchedRight(op("aten::bmm", { { 1, 64, 16 }, { 1, 16, 32 } }, {})));
        QVERIFY(ContractShapes::of("bmm", linear).empty());
        // A broadcast against a batched B: routed to bmm, no shapes here (the expanded bmm row carries the
        // folder, which the harness refuses with the reason); mismatched inner dims: none.
        const OpCall broadcast = op("aten::matmul", { { 1, 4, 1 }, { 2, 1, 16 } }, {});
        QVERIFY(ContractShapes::batchedRight(broadcast));
        QVERIFY(ContractShapes::of("bmm", broadcast).empty());
        QVERIFY(ContractShapes::of("bmm", op("aten::bmm", { { 2, 4, 8 }, { 2, 7, 16 } }, {})).empty());
        QVERIFY(ContractShapes::of("bmm", op("aten::copy_", { { 2, 4, 8 }, { 2, 4, 8 } }, {})).empty());
    }
};

AK_TEST_CLASS(RooflineTest)
#include "tst_roofline.moc"
