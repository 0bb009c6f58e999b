"""bmm: batched matmul C[batch, M, N] = A[batch, M, K] @ B[batch, K, N], both operands batched.

Attention written by hand (`q @ k.transpose(-2, -1)`, `probs @ v`, torch.bmm of 3-D tensors): batch is
the product of the leading dims A and B share (no broadcasting of one against the other).

Contract attribute b_transposed (docs/contracts.md): false, kernel_fn(A, B) with B[batch, K, N]
contiguous; true, kernel_fn(A, Bt) with Bt[batch, N, K] contiguous and C = A @ Bt^T: the model's
right operand is the transpose of a contiguous tensor (`k.transpose(-2, -1)`), and the plug hands
the kernel that tensor's own storage, no copy. The profiler's recorded strides decide which."""

from ..contract.inputs import data, weight
from ..contract.spec import OpSpec, Refused, choice, fact_args, fact_name, fact_tensor, pick, prod, site_label, tol

ATTRS = {"b_transposed": choice(False, True)}


def reference(A, B):
    import torch
    return torch.bmm(A, B)


def reference_bt(A, Bt):
    import torch
    return torch.bmm(A, Bt.transpose(1, 2))


def _bind(attrs):
    bt = attrs["b_transposed"]

    def make_inputs(size, dtype, device, gen, dist):
        batch, M, N, K = size["batch"], size["M"], size["N"], size["K"]
        A = data((batch, M, K), dtype, device, gen, dist, SPEC)
        B = weight((batch, N, K) if bt else (batch, K, N), dtype, device, gen, scale=K ** -0.5)  # C ~ O(|A|)
        return A, B

    return dict(
        reference=reference_bt if bt else reference, make_inputs=make_inputs,
        summary="C = A @ Bt^T (per batch)" if bt else "C = A @ B (per batch)",
        args=("A", "Bt") if bt else ("A", "B"),
        arg_shapes=("A[batch, M, K]", "Bt[batch, N, K]") if bt else ("A[batch, M, K]", "B[batch, K, N]"),
        constraints="any batch, M, N, K >= 1; inputs contiguous" + (
            "; the right operand comes as Bt[batch, N, K] (the model's k, not k.transpose(-2, -1)): "
            "C[b] = A[b] @ Bt[b]^T" if bt else ""))


def _layout(t):
    """True when a recorded right operand is the transpose of a contiguous tensor (its last two dims
    swapped: stride[-2] == 1), False for a contiguous one or any other view (the plug copies those)."""
    stride, shape = t.get("stride"), t.get("shape") or ()
    if t.get("contiguous", True) or not isinstance(stride, list) or len(stride) < 2:
        return False
    return stride[-2] == 1 and stride[-1] != 1 and shape[-1] > 1 and shape[-2] > 1


def site_attrs(fact):
    """One call site's facts -> attrs (docs/contracts.md); Refused for what is not supported."""
    args, where, name = fact_args(fact), site_label(fact), fact_name(fact).lower()
    for what in ("baddbmm", "addbmm"):
        if what in name:
            raise Refused("%s: %s (an addend, a sum over the batch): not supported (A @ B per batch only)"
                          % (where, what))
    for k in ("alpha", "beta"):
        found, v = pick(args, k)
        if found and v not in (1, 1.0):
            raise Refused("%s: batched matmul with %s %r: not supported" % (where, k, v))
    a = fact_tensor(fact, "input", "self", "batch1", "a", "A")
    b = fact_tensor(fact, "other", "mat2", "batch2", "b", "B")
    if a is None or b is None:
        return {}                       # an old profile: the defaults
    sa, sb = list(a.get("shape") or ()), list(b.get("shape") or ())
    if len(sa) < 3 or len(sb) < 3 or sa[:-2] != sb[:-2]:
        raise Refused("%s: batched matmul broadcasting A %s against B %s: not supported (A and B share their "
                      "leading dims: A[batch, M, K] @ B[batch, K, N])" % (where, sa, sb))
    if sa[-1] != sb[-2]:
        raise Refused("%s: batched matmul of A %s and B %s: inner dimensions differ" % (where, sa, sb))
    return {"b_transposed": _layout(b)}


def from_shapes(shapes):
    """[A[..., M, K], B[..., K, N]] (B logical, whatever its layout) -> {batch, M, N, K}."""
    a, b = list(shapes[0]), list(shapes[1])
    if len(a) < 3 or len(b) < 3:
        raise ValueError("bmm shapes %r: A and B must both be batched (3-D or more)" % (shapes,))
    if a[:-2] != b[:-2]:
        raise ValueError("bmm shapes %r: leading dims %r and %r differ (no broadcasting)" % (shapes, a[:-2], b[:-2]))
    if a[-1] != b[-2]:
        raise ValueError("bmm shapes %r: inner dimensions %d and %d differ" % (shapes, a[-1], b[-2]))
    return {"batch": prod(a[:-2]), "M": a[-2], "N": b[-1], "K": a[-1]}


SPEC = OpSpec(
    name="bmm",
    summary="",
    args=("A", "B"),
    arg_shapes=("A[batch, M, K]", "B[batch, K, N]"),
    output="C[batch, M, N], dtype of A",
    dims=("batch", "M", "N", "K"),
    reference=None,
    make_inputs=None,
    flops=lambda s: 2.0 * s["batch"] * s["M"] * s["N"] * s["K"],
    bytes=lambda s, dt: float(s["batch"] * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"])) * dt,
    flops_text="2*batch*M*N*K",
    bytes_text="batch*(M*K + K*N + M*N) * dt",
    tolerances=tol(1e-4, 1e-2, 2e-2),
    # Attention-like first: scores (M = N = S, K = head dim) and their product with V (K = S, N = head dim).
    sizes={
        "cuda": [{"batch": 96, "M": 1024, "N": 1024, "K": 64}, {"batch": 96, "M": 1024, "N": 64, "K": 1024},
                 {"batch": 768, "M": 197, "N": 197, "K": 64}, {"batch": 32, "M": 2048, "N": 2048, "K": 128}],
        "cpu": [{"batch": 8, "M": 64, "N": 64, "K": 32}, {"batch": 24, "M": 128, "N": 128, "K": 64},
                {"batch": 24, "M": 128, "N": 64, "K": 128}],
        "quick": [{"batch": 4, "M": 32, "N": 32, "K": 32}, {"batch": 6, "M": 48, "N": 16, "K": 48}],
    },
    odd_sizes={
        "cuda": [{"batch": 37, "M": 197, "N": 197, "K": 72}, {"batch": 1, "M": 1, "N": 4097, "K": 80}],
        "cpu": [{"batch": 5, "M": 97, "N": 131, "K": 67}, {"batch": 3, "M": 1, "N": 129, "K": 33}],
        "quick": [{"batch": 3, "M": 37, "N": 53, "K": 21}],
    },
    secret_ranges={
        "cuda": {"batch": (1, 256), "M": (17, 1500), "N": (17, 1500), "K": (16, 256)},
        "cpu": {"batch": (1, 16), "M": (9, 160), "N": (9, 160), "K": (9, 128)},
        "quick": {"batch": (1, 6), "M": (5, 64), "N": (5, 64), "K": (5, 64)},
    },
    headline={"cuda": {"batch": 96, "M": 1024, "N": 1024, "K": 64},
              "cpu": {"batch": 24, "M": 128, "N": 128, "K": 64},
              "quick": {"batch": 4, "M": 64, "N": 64, "K": 64}},
    from_shapes=from_shapes,
    large={"float16": 300.0, "bfloat16": 1e4, "float32": 1e4},
    attr_defs=ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
