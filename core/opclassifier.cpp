#include "opclassifier.h"

#include <QHash>
#include <QRegularExpression>

#include <utility>
#include <vector>

namespace ak {

namespace {

const QHash<QString, QString> &atenTable()
{
    static const QHash<QString, QString> table = [] {
        QHash<QString, QString> t;
        auto add = [&t](const QString &type, std::initializer_list<const char *> ops) {
            for (const char *op : ops)
                t.insert(QLatin1String(op), type);
        };
        add(QStringLiteral("matmul"),
            { "mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "einsum",
                "_scaled_mm", "_addmm_activation", "addbmm", "_int_mm" });
        add(QStringLiteral("flash_attention"),
            { "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
                "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                "_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention_for_cpu",
                "_flash_attention_forward", "_efficient_attention_forward", "_cudnn_attention_forward",
                "_scaled_dot_product_fused_attention_overrideable" });
        add(QStringLiteral("softmax"),
            { "softmax", "_softmax", "_safe_softmax", "log_softmax", "_log_softmax" });
        add(QStringLiteral("cross_entropy"),
            { "cross_entropy_loss", "nll_loss", "nll_loss_nd", "nll_loss_forward", "nll_loss2d_forward" });
        add(QStringLiteral("layernorm"), { "layer_norm", "native_layer_norm" });
        add(QStringLiteral("rmsnorm"), { "rms_norm", "_fused_rms_norm" });
        add(QStringLiteral("conv"),
            { "conv1d", "conv2d", "conv3d", "convolution", "_convolution", "cudnn_convolution",
                "mkldnn_convolution", "miopen_convolution", "conv_transpose2d", "_nnpack_spatial_convolution",
                "thnn_conv2d", "_slow_conv2d_forward" });
        add(QStringLiteral("batchnorm"),
            { "batch_norm", "_batch_norm_impl_index", "native_batch_norm", "cudnn_batch_norm",
                "_native_batch_norm_legit", "_native_batch_norm_legit_no_training", "group_norm",
                "native_group_norm" });
        add(QStringLiteral("embedding"), { "embedding", "embedding_bag", "_embedding_bag" });
        add(QStringLiteral("activation"),
            { "gelu", "silu", "relu", "relu_", "sigmoid", "tanh", "mish", "hardswish", "hardsigmoid", "elu",
                "selu", "leaky_relu", "clamp_min", "clamp_min_", "threshold", "softplus", "gelu_", "silu_",
                "glu" });
        add(QStringLiteral("reduce"),
            { "sum", "mean", "amax", "amin", "max", "min", "prod", "norm", "linalg_vector_norm", "var", "std",
                "var_mean", "argmax", "argmin", "logsumexp", "cumsum", "any", "all", "adaptive_avg_pool2d",
                "_adaptive_avg_pool2d", "mean_dim", "avg_pool2d", "max_pool2d", "max_pool2d_with_indices" });
        add(QStringLiteral("copy"),
            { "copy_", "clone", "contiguous", "_to_copy", "to", "cat", "stack", "fill_", "zero_", "zeros",
                "zeros_like", "ones", "ones_like", "full", "empty_like", "index_select", "repeat_interleave",
                "repeat", "flip", "roll", "index", "gather", "scatter", "_unsafe_view", "arange", "triu",
                "tril", "randint", "normal_", "uniform_", "index_put_", "masked_select", "narrow_copy" });
        add(QStringLiteral("elementwise"),
            { "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "pow", "rsqrt", "sqrt", "exp",
                "log", "neg", "abs", "reciprocal", "masked_fill", "masked_fill_", "where", "clamp", "clamp_",
                "addcmul", "addcdiv", "lerp", "sin", "cos", "erf", "maximum", "minimum", "floor", "ceil",
                "round", "sign", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                "logical_not", "bitwise_and", "rsub", "square", "exp2", "log1p", "expm1", "sigmoid_", "tanh_",
                "fmod", "remainder", "dropout", "native_dropout", "_masked_softmax", "rotate_half" });
        return t;
    }();
    return table;
}

QString moduleHint(const QString &module)
{
    const QString m = module.toLower();
    if (m.isEmpty())
        return QString();
    static const QRegularExpression rms(QStringLiteral("rms_?norm"));
    static const QRegularExpression rot(
        QStringLiteral("rotary|rope\\b|^rope|rotaryemb|rotate_half|apply_rope"));
    static const QRegularExpression glu(
        QStringLiteral("swiglu|geglu|reglu|gated_?mlp|llama_?mlp|mistral_?mlp|"
                       "qwen\\d*_?mlp|gemma_?mlp|glu_?mlp|glu_?ffn"));
    static const QRegularExpression ln(QStringLiteral("layer_?norm"));
    if (rms.match(m).hasMatch())
        return QStringLiteral("rmsnorm");
    if (rot.match(m).hasMatch())
        return QStringLiteral("rotary_embedding");
    if (glu.match(m).hasMatch())
        return QStringLiteral("fused_mlp");
    if (ln.match(m).hasMatch())
        return QStringLiteral("layernorm");
    return QString();
}

} // namespace

QString OpClassifier::opTypeOfAten(const QString &atenOp)
{
    return atenTable().value(OpCall::bareOp(atenOp));
}

bool OpClassifier::isSpecific(const QString &t)
{
    static const QStringList generic = { QStringLiteral("activation"), QStringLiteral("elementwise"),
        QStringLiteral("reduce"), QStringLiteral("copy"), QStringLiteral("unknown") };
    return !t.isEmpty() && !generic.contains(t);
}

QString OpClassifier::opTypeOfKernelName(const QString &kernelName)
{
    struct Pattern
    {
        const char *regex;
        const char *type;
    };
    // Order matters: convolutions run as implicit GEMMs, attention kernels contain "gemm" pieces.
    static const Pattern patterns[] = {
        { "fmha|flash_?fwd|flash_?bwd|flash_?attn|fort_native_sdpa|_sdpa_|attention|pytorch_flash",
            "flash_attention" },
        { "implicit_?gemm|fprop|dgrad|wgrad|conv2d|convolution|winograd|_conv_", "conv" },
        { "nvjet|gemm|cublas|cutlass|xmma|s884|h884|s1688|h1688|s16816|h16816|cijk_|matmul|_mm_", "matmul" },
        { "rms_?norm", "rmsnorm" },
        { "layer_?norm", "layernorm" },
        { "cross_?entropy|nll_?loss", "cross_entropy" },
        { "softmax", "softmax" },
        { "rotary|rope_", "rotary_embedding" },
        { "batch_?norm|bn_fw|group_?norm", "batchnorm" },
        { "gelu|silu|relu|sigmoid|tanh|swish", "activation" },
        { "reduce_kernel|reduction|_reduce|sum_kernel", "reduce" },
        { "copy_kernel|memcpy|memset|cat_|fill_kernel|direct_copy", "copy" },
        { "elementwise|pointwise|triton_poi", "elementwise" },
    };
    // Compiled once; static initialisation is thread-safe.
    static const std::vector<std::pair<QRegularExpression, QString>> compiled = [] {
        std::vector<std::pair<QRegularExpression, QString>> out;
        for (const Pattern &p : patterns)
            out.emplace_back(QRegularExpression(QLatin1String(p.regex)), QLatin1String(p.type));
        return out;
    }();
    const QString k = kernelName.toLower();
    for (const auto &[regex, type] : compiled) {
        if (regex.match(k).hasMatch())
            return type;
    }
    return QString();
}

OpClassifier::Result OpClassifier::classify(const OpCall &call)
{
    // 0. A region the profiler merged from several ops (akregions.py, #40): it names its op type.
    if (call.atenOp.startsWith(QLatin1String("region::")))
        return { call.atenOp.mid(8), QStringLiteral("region") };
    // 1. Outermost specific op in the chain: the composite the user called says what the work is for.
    QStringList chain;
    if (!call.atenOp.isEmpty())
        chain << call.atenOp;
    chain << call.opStack;
    for (int i = int(chain.size()) - 1; i >= 0; --i) {
        const QString t = opTypeOfAten(chain[i]);
        if (isSpecific(t))
            return { t, chain[i] };
    }
    const QString generic = call.atenOp.isEmpty() ? QString() : opTypeOfAten(call.atenOp);
    // 2. Generic work inside a module, or called from a Python function, that names the fusable op it
    //    implements (a model's apply_rotary_pos_emb is a function, not a module).
    if (!call.atenOp.isEmpty()) {
        const QString hint = moduleHint(call.module);
        if (!hint.isEmpty())
            return { hint, QStringLiteral("module %1").arg(call.module) };
        for (const QString &function : call.functions) {
            const QString byFunction = moduleHint(function);
            if (!byFunction.isEmpty())
                return { byFunction, QStringLiteral("function %1").arg(function) };
        }
    }
    // 3. The innermost op's own class.
    if (!generic.isEmpty())
        return { generic, call.atenOp };
    // 4. Kernel name, the weakest evidence.
    const QString byName = opTypeOfKernelName(call.kernelName);
    if (!byName.isEmpty())
        return { byName, QStringLiteral("kernel name") };
    return { QStringLiteral("unknown"), QStringLiteral("no match") };
}

QStringList OpClassifier::opTypes()
{
    return { QStringLiteral("matmul"), QStringLiteral("flash_attention"), QStringLiteral("softmax"),
        QStringLiteral("layernorm"), QStringLiteral("rmsnorm"), QStringLiteral("fused_mlp"),
        QStringLiteral("cross_entropy"), QStringLiteral("rotary_embedding"), QStringLiteral("reduce"),
        QStringLiteral("activation"), QStringLiteral("elementwise"), QStringLiteral("conv"),
        QStringLiteral("batchnorm"), QStringLiteral("embedding"), QStringLiteral("copy"),
        QStringLiteral("add_rmsnorm"), QStringLiteral("add_layernorm"), QStringLiteral("unknown") };
}

} // namespace ak
