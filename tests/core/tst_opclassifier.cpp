#include "contractshapes.h"
#include "deviceinfo.h"
#include "kernelcontract.h"
#include "opclassifier.h"
#include "roofline.h"
#include "testregistry.h"

using namespace ak;

namespace {

OpCall call(
    const QString &kernel, const QString &aten, const QStringList &stack = {}, const QString &module = {})
{
    OpCall c;
    c.kernelName = kernel;
    c.atenOp = aten;
    c.opStack = stack;
    c.module = module;
    return c;
}

} // namespace

class OpClassifierTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void classify_data()
    {
        QTest::addColumn<OpCall>("c");
        QTest::addColumn<QString>("type");
        QTest::newRow("cuBLAS nvjet under addmm") << call("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTN",
            "aten::addmm", { "aten::linear" }) << "matmul";
        QTest::newRow("cuDNN sdpa") << call(
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3",
            "aten::_scaled_dot_product_cudnn_attention", { "aten::scaled_dot_product_attention" })
                                    << "flash_attention";
        QTest::newRow("sdpa math path bmm is attention") << call("aten::bmm", "aten::bmm",
            { "aten::matmul", "aten::_scaled_dot_product_attention_math",
                "aten::scaled_dot_product_attention" }) << "flash_attention";
        QTest::newRow("bias copy inside addmm belongs to the GEMM") << call(
            "void at::native::elementwise_kernel<128, 2>(copy)", "aten::copy_",
            { "aten::addmm", "aten::linear" }) << "matmul";
        QTest::newRow("log_softmax inside cross entropy") << call(
            "cunn_SoftMaxForward", "aten::_log_softmax", { "aten::log_softmax", "aten::cross_entropy_loss" })
                                                          << "cross_entropy";
        QTest::newRow("plain softmax")
            << call("cunn_SoftMaxForward", "aten::_softmax", { "aten::softmax" }) << "softmax";
        QTest::newRow("layernorm") << call("vectorized_layer_norm_kernel", "aten::native_layer_norm",
            { "aten::layer_norm" }) << "layernorm";
        QTest::newRow("unfused rmsnorm pow")
            << call("elementwise_kernel(pow)", "aten::pow", {}, "RMSNorm") << "rmsnorm";
        QTest::newRow("unfused rotary mul")
            << call("elementwise_kernel(mul)", "aten::mul", {}, "Rotary") << "rotary_embedding";
        QTest::newRow("swiglu silu") << call("silu_kernel", "aten::silu", {}, "SwiGLU") << "fused_mlp";
        {
            // transformers' Llama: rotary is a function called inside the attention module.
            OpCall cat = call("CatArrayBatchedCopy", "aten::cat", {}, "LlamaAttention");
            cat.functions = { QStringLiteral("rotate_half"), QStringLiteral("apply_rotary_pos_emb"),
                QStringLiteral("forward") };
            QTest::newRow("rotary as a function (rotate_half)") << cat << "rotary_embedding";
            OpCall mul = call("elementwise_kernel(mul)", "aten::mul", {}, "LlamaAttention");
            mul.functions = { QStringLiteral("apply_rotary_pos_emb"), QStringLiteral("forward") };
            QTest::newRow("rotary as a function (apply_rotary_pos_emb)") << mul << "rotary_embedding";
            OpCall copy = call("elementwise_kernel(copy)", "aten::copy_", {}, "LlamaAttention");
            copy.functions = { QStringLiteral("repeat_kv"), QStringLiteral("forward") };
            QTest::newRow("other attention copies stay copies") << copy << "copy";
        }
        QTest::newRow("swiglu's matmul stays matmul")
            << call("nvjet_sm90_x", "aten::mm", { "aten::linear" }, "Linear") << "matmul";
        QTest::newRow("gelu") << call("GeluCUDAKernelImpl", "aten::gelu", {}, "MLP") << "activation";
        QTest::newRow("relu on cpu") << call("aten::clamp_min", "aten::clamp_min") << "activation";
        QTest::newRow("sum") << call("reduce_kernel<512, 1>", "aten::sum") << "reduce";
        QTest::newRow("residual add")
            << call("vectorized_elementwise_kernel", "aten::add", {}, "Block") << "elementwise";
        QTest::newRow("name fallback: nvjet with no op") << call("nvjet_sm90_tst_128x256", "") << "matmul";
        QTest::newRow("name fallback: flash")
            << call("flash_fwd_kernel<Flash_fwd_kernel_traits>", "") << "flash_attention";
        QTest::newRow("honest unknown") << call("some_custom_kernel_v2", "") << "unknown";
        QTest::newRow("unknown aten op, unknown name") << call("my_ext_kernel", "myext::op") << "unknown";
    }

    void classify()
    {
        QFETCH(OpCall, c);
        QFETCH(QString, type);
        const OpClassifier::Result r = OpClassifier::classify(c);
        QCOMPARE(r.opType, type);
        QVERIFY(OpClassifier::opTypes().contains(r.opType));
        QVERIFY(!r.reason.isEmpty());
    }

    void atenBeatsKernelName()
    {
        // A kernel named like a GEMM but launched by layer_norm is a layernorm.
        const auto r = OpClassifier::classify(call("gemm_like_layer_kernel", "aten::native_layer_norm"));
        QCOMPARE(r.opType, QStringLiteral("layernorm"));
        QCOMPARE(r.reason, QStringLiteral("aten::native_layer_norm"));
    }

    void regionRows()
    {
        // A region row (profiler/python/akregions.py, #40) names its op type; its shapes are the fused
        // kernel's operands, and its roof counts the bytes the fusion saves (4MN, not the 6MN of apart).
        OpCall add = call(QStringLiteral("add_rmsnorm region"), QStringLiteral("region::add_rmsnorm"), {},
            QStringLiteral("LlamaRMSNorm"));
        add.shapes = { { 4, 1024, 2048 }, { 4, 1024, 2048 }, { 2048 } };
        add.dtypes = { QStringLiteral("bf16"), QStringLiteral("bf16"), QStringLiteral("bf16") };
        const auto r = OpClassifier::classify(add);
        QCOMPARE(r.opType, QStringLiteral("add_rmsnorm"));
        QCOMPARE(r.reason, QStringLiteral("region"));
        QVERIFY(OpClassifier::opTypes().contains(r.opType));
        QCOMPARE(int(ContractShapes::of(r.opType, add).size()), 3);
        const RooflineEstimate w = Roofline::work(add, r.opType, QStringLiteral("bf16"));
        QVERIFY(w.known);
        const double mn = 4.0 * 1024 * 2048;
        QCOMPARE(w.bytes, (4 * mn + 2048) * 2);
        // The same shapes on a plain aten::add row are no region: no add_rmsnorm contract shapes.
        QVERIFY(ContractShapes::of(
            QStringLiteral("add_rmsnorm"), call(QStringLiteral("add"), QStringLiteral("aten::add")))
                    .empty());

        OpCall mlp = call(QStringLiteral("fused_mlp region"), QStringLiteral("region::fused_mlp"));
        mlp.shapes = { { 4, 1024, 2048 }, { 5632, 2048 }, { 5632, 2048 }, { 2048, 5632 } };
        mlp.dtypes = { QStringLiteral("bf16"), QStringLiteral("bf16"), QStringLiteral("bf16"),
            QStringLiteral("bf16") };
        QCOMPARE(OpClassifier::classify(mlp).opType, QStringLiteral("fused_mlp"));
        QCOMPARE(int(ContractShapes::of(QStringLiteral("fused_mlp"), mlp).size()), 4);
        QCOMPARE(Roofline::work(mlp, QStringLiteral("fused_mlp"), QStringLiteral("bf16")).flops,
            6.0 * 4096 * 2048 * 5632);
        // An unfused SwiGLU piece (silu inside LlamaMLP) still has no folder of its own.
        OpCall piece
            = call(QStringLiteral("silu"), QStringLiteral("aten::silu"), {}, QStringLiteral("LlamaMLP"));
        piece.shapes = { { 4096, 5632 } };
        QVERIFY(ContractShapes::of(QStringLiteral("fused_mlp"), piece).empty());
    }

    void contractCoversRoundTrip()
    {
        KernelContract c;
        c.callable = QStringLiteral("region:add_rmsnorm");
        c.covers = { QStringLiteral("add"), QStringLiteral("rmsnorm") };
        QCOMPARE(c.coversText(), QStringLiteral("swallows: add, rmsnorm"));
        QVERIFY(KernelContract::fromJson(c.toJson()) == c);
        KernelContract plain;
        plain.callable = QStringLiteral("module:x.RMSNorm");
        QVERIFY(!plain.toJson().contains("covers"));
        QVERIFY(plain.coversText().isEmpty());
    }
};

AK_TEST_CLASS(OpClassifierTest)
#include "tst_opclassifier.moc"
