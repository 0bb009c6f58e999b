#include "roofline.h"

#include "opclassifier.h"

#include <algorithm>
#include <numeric>

namespace ak {

namespace {

using Shape = std::vector<int64_t>;

double numel(const Shape &s)
{
    return std::accumulate(s.begin(), s.end(), 1.0, [](double a, int64_t b) { return a * double(b); });
}

// Tensor inputs only: an empty shape is a non-tensor argument (or a 0-d scalar, which moves no data).
Shape broadcast(const std::vector<Shape> &shapes)
{
    size_t rank = 0;
    for (const Shape &s : shapes)
        rank = std::max(rank, s.size());
    Shape out(rank, 1);
    for (const Shape &s : shapes) {
        for (size_t i = 0; i < s.size(); ++i) {
            int64_t &o = out[rank - s.size() + i];
            o = std::max(o, s[i]);
        }
    }
    return out;
}

// Index of is_causal among the op's arguments, per the aten schemas.
int causalArgIndex(const QString &op)
{
    if (op == QLatin1String("scaled_dot_product_attention"))
        return 5;
    if (op == QLatin1String("_scaled_dot_product_flash_attention"))
        return 4;
    if (op == QLatin1String("_scaled_dot_product_efficient_attention"))
        return 5;
    if (op == QLatin1String("_scaled_dot_product_cudnn_attention"))
        return 6;
    if (op == QLatin1String("_cudnn_attention_forward")) // seen on an H200, torch 2.11
        return 10;
    if (op == QLatin1String("_flash_attention_forward"))
        return 8;
    return -1;
}

bool matmulWork(const QString &op, const std::vector<Shape> &t, double dt, RooflineEstimate *r)
{
    // Pick the two GEMM operands; addmm / baddbmm carry the bias first, linear has x and W[N, K].
    Shape a, b;
    bool weightTransposed = false;
    if ((op == QLatin1String("addmm") || op == QLatin1String("baddbmm")
            || op == QLatin1String("_addmm_activation") || op == QLatin1String("addbmm"))
        && t.size() >= 3) {
        a = t[1];
        b = t[2];
    } else if (op == QLatin1String("linear") && t.size() >= 2) {
        a = t[0];
        b = t[1];
        weightTransposed = true;
    } else if (t.size() >= 2) {
        a = t[0];
        b = t[1];
    } else {
        return false;
    }
    if (a.size() < 2 || b.size() < 2)
        return false;
    const double k = double(a.back());
    const double m = numel(a) / k; // leading dimensions of A fold into M (batch included)
    const double n = weightTransposed ? double(b[b.size() - 2]) : double(b.back());
    const double kb = weightTransposed ? double(b.back()) : double(b[b.size() - 2]);
    if (kb != k)
        return false;
    // A batched B (bmm) has its own batch; a 2-D B is shared by every row of A.
    const double bBatch = b.size() > 2 ? numel(b) / (double(b[b.size() - 2]) * double(b.back())) : 1.0;
    r->flops = 2.0 * m * n * k;
    r->bytes = (m * k + bBatch * k * n + m * n) * dt;
    r->formula = QStringLiteral("matmul: 2MNK flops, (MK+KN+MN) bytes");
    return true;
}

bool attentionWork(
    const OpCall &c, const QString &op, const std::vector<Shape> &t, double dt, RooflineEstimate *r)
{
    if (t.size() < 3 || t[0].size() != 4 || t[1].size() != 4 || t[2].size() != 4)
        return false;
    const Shape &q = t[0], &k = t[1], &v = t[2];
    const double b = double(q[0]), h = double(q[1]), s = double(q[2]), d = double(q[3]);
    const double sk = double(k[2]), dv = double(v[3]);
    bool causal = false;
    const int idx = causalArgIndex(op);
    if (idx >= 0 && idx < c.concreteInputs.size())
        causal = c.concreteInputs.at(idx).toBool();
    r->flops = 2.0 * b * h * s * sk * (d + dv) * (causal ? 0.5 : 1.0);
    r->bytes = (numel(q) + numel(k) + numel(v) + b * h * s * dv) * dt;
    r->formula = causal ? QStringLiteral("attention: 4BHS^2D/2 flops (causal), 4BHSD bytes")
                        : QStringLiteral("attention: 4BHS^2D flops (not known to be causal), 4BHSD bytes");
    return true;
}

// Whether a family of formulas fits an op: not its kind (the next family is tried), fitted, or its kind
// with shapes the formula cannot read.
enum class RoofFit { NotThisKind, Fitted, Unfit };

// The element type bytes are counted in: the first recorded tensor input of a known size that is not
// int64 or bool, else the run's dtype.
QString roofWorkDtype(const OpCall &c, const QString &runDtype)
{
    QString dtype;
    for (int i = 0; i < c.dtypes.size() && dtype.isEmpty(); ++i) {
        if (Roofline::elementSize(c.dtypes[i]) > 0 && i < int(c.shapes.size()) && !c.shapes[size_t(i)].empty()
            && c.dtypes[i] != QLatin1String("int64") && c.dtypes[i] != QLatin1String("bool"))
            dtype = c.dtypes[i];
    }
    return dtype.isEmpty() ? runDtype : dtype;
}

// The formula family: the aten op's own class, else the profiler's opType; an nll_loss is a gather.
QString roofWorkKind(const OpCall &c, const QString &op, const QString &opType)
{
    QString kind = OpClassifier::opTypeOfAten(c.atenOp);
    if (kind.isEmpty())
        kind = opType;
    if (op == QLatin1String("nll_loss") || op == QLatin1String("nll_loss_nd")
        || op == QLatin1String("nll_loss_forward"))
        kind = QStringLiteral("gather");
    return kind;
}

// Ops that read their rows once: softmax, the norms, the losses and reductions.
RoofFit roofRowWork(
    const QString &kind, const QString &op, const std::vector<Shape> &t, double dt, RooflineEstimate *r)
{
    const Shape &x = t[0];
    const double n = numel(x);
    const double last = x.empty() ? 0 : double(x.back());
    if (kind == QLatin1String("softmax")) {
        r->flops = 5.0 * n;
        r->bytes = 2.0 * n * dt;
        r->formula = QStringLiteral("softmax: 5rc flops, 2rc bytes");
    } else if (kind == QLatin1String("layernorm")) {
        const double d = t.size() > 1 ? numel(t[1]) : last;
        r->flops = 8.0 * n;
        r->bytes = (2.0 * n + 2.0 * d) * dt;
        r->formula = QStringLiteral("layernorm: 8bd flops, (2bd+2d) bytes");
    } else if (kind == QLatin1String("rmsnorm")
        && (op == QLatin1String("rms_norm") || op == QLatin1String("_fused_rms_norm"))) {
        r->flops = 6.0 * n;
        r->bytes = (2.0 * n + last) * dt;
        r->formula = QStringLiteral("rmsnorm: 6MN flops, (2MN+N) bytes");
    } else if (kind == QLatin1String("add_rmsnorm") || kind == QLatin1String("add_layernorm")) {
        // One pass: read x and residual, write the sum and the normalised rows; weight (and bias).
        const double params = double(t.size() > 2 ? t.size() - 2 : 1) * last;
        r->flops = 8.0 * n;
        r->bytes = (4.0 * n + params) * dt;
        r->formula = QStringLiteral("%1: 8MN flops, (4MN+N) bytes").arg(kind);
    } else if (kind == QLatin1String("cross_entropy")) {
        const double b = n / last;
        r->flops = 4.0 * n;
        r->bytes = (n + b) * dt;
        r->formula = QStringLiteral("cross_entropy: 4bv flops, (bv+b) bytes");
    } else if (kind == QLatin1String("gather")) {
        const double b = t.size() > 1 ? numel(t[1]) : n / last;
        r->flops = b;
        r->bytes = b * (2.0 * dt + 8.0);
        r->formula = QStringLiteral("nll_loss: reads one logit and one int64 target per row");
    } else if (kind == QLatin1String("reduce")) {
        r->flops = n;
        r->bytes = n * dt;
        r->formula = QStringLiteral("reduce: MN flops, MN bytes (output ignored: a lower bound)");
    } else {
        return RoofFit::NotThisKind;
    }
    return RoofFit::Fitted;
}

// Ops that only move data: an embedding's looked-up rows, and copies (written in the run's dtype when known).
RoofFit roofMovementWork(const QString &kind, const QString &op, const std::vector<Shape> &t, double dt,
    const QString &runDtype, RooflineEstimate *r)
{
    const Shape &x = t[0];
    const double n = numel(x);
    const double last = x.empty() ? 0 : double(x.back());
    if (kind == QLatin1String("embedding")) {
        const double rows = t.size() > 1 ? numel(t[1]) : 0;
        r->flops = 0;
        r->bytes = rows * last * 2.0 * dt + rows * 8.0;
        r->formula = QStringLiteral("embedding: read and write one row per index");
        return rows > 0 ? RoofFit::Fitted : RoofFit::Unfit;
    }
    if (kind == QLatin1String("copy")
        && (op == QLatin1String("copy_") || op == QLatin1String("clone") || op == QLatin1String("contiguous")
            || op == QLatin1String("_to_copy") || op == QLatin1String("to"))) {
        const double outDt = Roofline::elementSize(runDtype) > 0 ? Roofline::elementSize(runDtype) : dt;
        r->flops = 0;
        r->bytes = n * (dt + outDt);
        r->formula = QStringLiteral("copy: read + write every element");
        return RoofFit::Fitted;
    }
    return RoofFit::NotThisKind;
}

// A fused MLP region's three GEMMs, else pointwise work: unfused torch code or a plain pointwise op.
RoofFit roofPointwiseWork(
    const QString &kind, const QString &op, const std::vector<Shape> &t, double dt, RooflineEstimate *r)
{
    if (kind == QLatin1String("fused_mlp") && op.startsWith(QLatin1String("region::")) && t.size() == 4) {
        // x[M, D], w_gate[H, D], w_up[H, D], w_down[D, H]: three GEMMs, x read once, y written once.
        const double n = numel(t[0]);
        const double last = t[0].empty() ? 0 : double(t[0].back());
        const double d = last, h = double(t[1].front()), m = n / last;
        r->flops = 6.0 * m * d * h;
        r->bytes = (2.0 * m * d + 3.0 * h * d) * dt;
        r->formula = QStringLiteral("fused_mlp: 6MDH flops, (2MD+3HD) bytes");
        return RoofFit::Fitted;
    }
    if (kind == QLatin1String("elementwise") || kind == QLatin1String("activation")
        || kind == QLatin1String("rmsnorm") || kind == QLatin1String("rotary_embedding")
        || kind == QLatin1String("fused_mlp")) {
        // Unfused torch code (or a plain pointwise op): each input read once, the broadcast output written
        // once.
        const Shape out = broadcast(t);
        double in = 0;
        for (const Shape &s : t)
            in += numel(s);
        r->flops = numel(out);
        r->bytes = (in + numel(out)) * dt;
        r->formula = QStringLiteral("elementwise: one flop per output, inputs + output bytes");
        return RoofFit::Fitted;
    }
    return RoofFit::NotThisKind;
}

// Every formula but the GEMM's and attention's, tried family by family (a kind whose op a family
// leaves out, such as an rmsnorm written in torch, falls through to pointwise); false: none fits.
bool roofFormulaWork(const QString &kind, const QString &op, const std::vector<Shape> &t, double dt,
    const QString &runDtype, RooflineEstimate *r)
{
    RoofFit fit = roofRowWork(kind, op, t, dt, r);
    if (fit == RoofFit::NotThisKind)
        fit = roofMovementWork(kind, op, t, dt, runDtype, r);
    if (fit == RoofFit::NotThisKind)
        fit = roofPointwiseWork(kind, op, t, dt, r);
    return fit == RoofFit::Fitted;
}

} // namespace

int Roofline::elementSize(const QString &dtype)
{
    const QString d = dtype.toLower();
    if (d == QLatin1String("fp32") || d == QLatin1String("float32") || d == QLatin1String("int32"))
        return 4;
    if (d == QLatin1String("bf16") || d == QLatin1String("fp16") || d == QLatin1String("int16"))
        return 2;
    if (d == QLatin1String("fp64") || d == QLatin1String("int64"))
        return 8;
    if (d.startsWith(QLatin1String("fp8")) || d == QLatin1String("int8") || d == QLatin1String("uint8")
        || d == QLatin1String("bool"))
        return 1;
    return 0;
}

RooflineEstimate Roofline::work(const OpCall &c, const QString &opType, const QString &runDtype)
{
    RooflineEstimate r;
    const QString dtype = roofWorkDtype(c, runDtype);
    const double dt = elementSize(dtype);
    if (dt <= 0) {
        r.why = QStringLiteral("unknown element type '%1'").arg(dtype);
        return r;
    }
    const std::vector<Shape> t = c.tensorShapes();
    const QString op = OpCall::bareOp(c.atenOp);
    const QString kind = roofWorkKind(c, op, opType);
    if (t.empty()) {
        r.why = QStringLiteral("no tensor shapes recorded");
        return r;
    }
    const bool ok = kind == QLatin1String("matmul") ? matmulWork(op, t, dt, &r)
        : kind == QLatin1String("flash_attention")  ? attentionWork(c, op, t, dt, &r)
                                                    : roofFormulaWork(kind, op, t, dt, runDtype, &r);
    if (!ok) {
        r = RooflineEstimate();
        r.why = QStringLiteral("no roofline formula for %1 (%2) with these shapes").arg(opType, c.atenOp);
        return r;
    }
    r.known = true;
    return r;
}

RooflineEstimate Roofline::floor(RooflineEstimate r, Precision precision, const DeviceInfo &device)
{
    if (!r.known)
        return r;
    const double peak = device.peak(precision) * 1e12;
    const double bw = device.bandwidthGBs * 1e9;
    if (bw <= 0 || (r.flops > 0 && peak <= 0)) {
        r.known = false;
        r.floorUs = 0;
        r.why = bw <= 0 ? QStringLiteral("device bandwidth unknown")
                        : QStringLiteral("device has no %1 peak").arg(precisionName(precision));
        return r;
    }
    const double computeUs = r.flops > 0 ? r.flops / peak * 1e6 : 0.0;
    const double memoryUs = r.bytes / bw * 1e6;
    r.floorUs = std::max(computeUs, memoryUs);
    r.bound = computeUs > memoryUs ? QStringLiteral("compute") : QStringLiteral("memory");
    return r;
}

RooflineEstimate Roofline::estimate(
    const OpCall &call, const QString &opType, const QString &runDtype, const DeviceInfo &device)
{
    RooflineEstimate w = work(call, opType, runDtype);
    // The precision the math runs at: the op's float inputs, else the run's dtype.
    QString dtype = runDtype;
    for (const QString &d : call.dtypes) {
        if (d == QLatin1String("bf16") || d == QLatin1String("fp16") || d == QLatin1String("fp32")) {
            dtype = d;
            break;
        }
    }
    Precision p = Precision::FP32;
    if (!parsePrecision(dtype, &p))
        p = Precision::FP32;
    return floor(w, p, device);
}

} // namespace ak
