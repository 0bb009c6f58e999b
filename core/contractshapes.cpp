#include "contractshapes.h"

#include <algorithm>

namespace ak {

namespace {

using Shape = ContractShapes::Shape;

bool rowsAndCols(const Shape &s)
{
    return s.size() >= 2 && s.back() > 1;
}

// The operands of a matmul-class aten op: baddbmm/addmm carry the addend first.
bool operands(const QString &op, const std::vector<Shape> &t, Shape *a, Shape *b)
{
    if ((op == QLatin1String("baddbmm") || op == QLatin1String("addmm")) && t.size() >= 3) {
        *a = t[1];
        *b = t[2];
        return true;
    }
    if ((op == QLatin1String("bmm") || op == QLatin1String("matmul") || op == QLatin1String("mm"))
        && t.size() >= 2) {
        *a = t[0];
        *b = t[1];
        return true;
    }
    return false;
}

int64_t leading(const Shape &s)
{
    int64_t n = 1;
    for (size_t i = 0; i + 2 < s.size(); ++i)
        n *= s[i];
    return n;
}

// bmm: A[..., M, K] @ B[..., K, N] with the same leading dims, flattened into one batch. A broadcast
// (A [1, M, K] against B [b, K, N], as torch.matmul allows) gives none: the expanded bmm row carries it.
std::vector<Shape> batchedShapes(const QString &op, const std::vector<Shape> &t)
{
    Shape a, b;
    if (!operands(op, t, &a, &b) || a.size() < 3 || b.size() != a.size()
        || !std::equal(a.begin(), a.end() - 2, b.begin()) || a.back() != b[b.size() - 2])
        return {};
    const int64_t batch = leading(a);
    return { Shape { batch, a[a.size() - 2], a.back() }, Shape { batch, b[b.size() - 2], b.back() } };
}

} // namespace

bool ContractShapes::batchedRight(const OpCall &call)
{
    Shape a, b;
    return operands(OpCall::bareOp(call.atenOp), call.tensorShapes(), &a, &b) && b.size() >= 3
        && leading(b) > 1;
}

std::vector<Shape> ContractShapes::of(const QString &opType, const OpCall &call)
{
    const QString op = OpCall::bareOp(call.atenOp);
    const std::vector<Shape> t = call.tensorShapes();
    if (t.empty())
        return {};
    if (opType == QLatin1String("matmul")) {
        Shape a, b;
        if ((op == QLatin1String("addmm") || op == QLatin1String("baddbmm")) && t.size() >= 3) {
            a = t[1];
            b = t[2];
        } else if (op == QLatin1String("linear") && t.size() >= 2 && t[1].size() == 2) { // W is [N, K]
            a = t[0];
            b = Shape { t[1][1], t[1][0] };
        } else if ((op == QLatin1String("mm") || op == QLatin1String("bmm") || op == QLatin1String("matmul"))
            && t.size() >= 2) {
            a = t[0];
            b = t[1];
        }
        if (a.size() < 2 || b.size() < 2 || a.back() != b[b.size() - 2])
            return {};
        if (b.size() == 2 && a.size() > 2) { // x[..., K] @ W: the leading dims are all rows of one GEMM
            int64_t m = 1;
            for (size_t i = 0; i + 1 < a.size(); ++i)
                m *= a[i];
            a = Shape { m, a.back() };
        }
        return { a, b };
    }
    if (opType == QLatin1String("bmm"))
        return batchedShapes(op, t);
    if (opType == QLatin1String("flash_attention")) {
        if (t.size() >= 3 && t[0].size() == 4 && t[1].size() == 4 && t[2].size() == 4)
            return { t[0], t[1], t[2] };
        return {};
    }
    if (opType == QLatin1String("softmax") || opType == QLatin1String("reduce")) {
        const bool own = op.contains(QLatin1String("softmax")) || opType == QLatin1String("reduce");
        return own && rowsAndCols(t[0]) ? std::vector<Shape> { t[0] } : std::vector<Shape> {};
    }
    if (opType == QLatin1String("gelu") || opType == QLatin1String("silu"))
        return rowsAndCols(t[0]) ? std::vector<Shape> { t[0] } : std::vector<Shape> {};
    if (opType == QLatin1String("layernorm")) {
        if (!rowsAndCols(t[0]))
            return {};
        const Shape w { t[0].back() };
        return { t[0], w, w };
    }
    if (opType == QLatin1String("rmsnorm")) {
        // Fused rms_norm, or the unfused expression's full-size ops (pow, mul); not the [.., 1] variance.
        if (!rowsAndCols(t[0]))
            return {};
        return { t[0], Shape { t[0].back() } };
    }
    if (opType == QLatin1String("add_rmsnorm") || opType == QLatin1String("add_layernorm")) {
        // A region row (akregions.py): x, residual [.., N], weight [N] (and bias [N]).
        if (!op.startsWith(QLatin1String("region::")) || t.size() < 3 || !rowsAndCols(t[0]) || t[1] != t[0])
            return {};
        return std::vector<Shape>(t.begin(), t.begin() + std::min<size_t>(t.size(), 4));
    }
    if (opType == QLatin1String("fused_mlp")) {
        // Only the region row carries the weights: x [.., D], w_gate [H, D], w_up [H, D], w_down [D, H].
        if (!op.startsWith(QLatin1String("region::")) || t.size() != 4 || !rowsAndCols(t[0]))
            return {};
        return t;
    }
    if (opType == QLatin1String("cross_entropy")) {
        if (!rowsAndCols(t[0]))
            return {};
        const Shape logits = t[0].size() == 2 ? t[0] : Shape {};
        if (logits.empty())
            return {};
        return { logits, Shape { logits[0] } };
    }
    if (opType == QLatin1String("rotary_embedding")) {
        // The unfused form multiplies half of x ([B,H,S,D/2], interleaved lanes) by cos or sin [S, D/2].
        for (size_t i = 0; i + 1 < t.size(); ++i) {
            const Shape &x = t[i];
            const Shape &c = t[i + 1];
            if (x.size() == 4 && c.size() == 2 && c[0] == x[2] && c[1] == x[3]) {
                const Shape full { x[0], x[1], x[2], 2 * x[3] };
                return { full, c, c };
            }
            // The NeoX form (transformers' rotate_half): the whole x [B,H,S,D] times cos [B|1, 1, S, D]
            // broadcast over the heads; the contract's tables are [S, D/2] (the halves repeat).
            if (x.size() == 4 && c.size() == 4 && c[1] == 1 && c[2] == x[2] && c[3] == x[3]
                && x[3] % 2 == 0) {
                const Shape half { x[2], x[3] / 2 };
                return { x, half, half };
            }
        }
        return {};
    }
    return {};
}

} // namespace ak
