"""torch.compile: kernels as torch.library custom ops with fake implementations."""

import torch

from .kernel import op_name
from .regions import REGION_OPS

# --- torch.compile: kernels as torch.library custom ops with fake implementations --------------
# A kernel_fn (a Triton launch, a CPU loop) is opaque to torch.compile: registered as a custom op with
# a fake (meta) implementation, Dynamo records one node whose output shape and dtype the fake gives,
# instead of tracing into it or breaking the graph there.

# op type -> output shape from the argument shapes, per the kernel_fn contract (docs/contracts.md).
# Plain functions of shapes (tuples or torch.Size, SymInts under dynamic shapes): tested without torch.
FAKE_SHAPES = {
    "softmax": lambda attrs, x: tuple(x),
    "gelu": lambda attrs, x: tuple(x),
    "silu": lambda attrs, x: tuple(x),
    "rmsnorm": lambda attrs, x, w: _same_last(x, w, "weight"),
    "layernorm": lambda attrs, x, w, *b: _same_last(x, w, "weight"),
    "flash_attention": lambda attrs, q, k, v: _attention_shape(q, k, v),
    "rotary_embedding": lambda attrs, x, cos, sin: _rotary_shape(x, cos, sin),
    "matmul": lambda attrs, a, b, *bias: _matmul_shape(a, b, bias),
    "bmm": lambda attrs, a, b: _bmm_shape(a, b, attrs.get("b_transposed", False)),
    "reduce": lambda attrs, x: tuple(x[:-1]),
    "cross_entropy": lambda attrs, logits, targets: _cross_entropy_shape(logits, targets),
    "fused_mlp": lambda attrs, x, g, u, d: _mlp_shape(x, g, u, d),
}
_ARITY = {"softmax": 1, "gelu": 1, "silu": 1, "reduce": 1, "matmul": 2, "rmsnorm": 2, "cross_entropy": 2, "bmm": 2,
          "layernorm": 3, "flash_attention": 3, "rotary_embedding": 3, "fused_mlp": 4}


def _same_last(x, w, what):
    if len(w) != 1 or w[0] != x[-1]:
        raise ValueError("%s %s does not fit x %s (the contract scales the last dim)" % (what, list(w), list(x)))
    return tuple(x)


def _attention_shape(q, k, v):
    if len(q) != 4 or tuple(k) != tuple(q) or tuple(v) != tuple(q):
        raise ValueError("q, k, v %s, %s, %s are not one [B, H, S, D] shape" % (list(q), list(k), list(v)))
    return tuple(q)


def _rotary_shape(x, cos, sin):
    if len(x) != 4 or tuple(cos) != tuple(sin) or len(cos) != 2 or cos[0] != x[2] or 2 * cos[1] != x[3]:
        raise ValueError("x %s with cos/sin %s is not x[B, H, S, D] with [S, D/2]" % (list(x), list(cos)))
    return tuple(x)


def _matmul_shape(a, b, bias):
    if len(a) != 2 or len(b) != 2 or a[1] != b[0] or any(tuple(c) != (b[1],) for c in bias):
        raise ValueError("a %s, b %s%s do not multiply as [M, K] x [K, N] (+ bias[N])"
                         % (list(a), list(b), "".join(", bias %s" % list(c) for c in bias)))
    return (a[0], b[1])


def _bmm_shape(a, b, bt):
    kn = (b[2], b[1]) if bt and len(b) == 3 else tuple(b[1:])
    if len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != kn[0]:
        raise ValueError("a %s, %s %s do not multiply as [batch, M, K] x %s" % (
            list(a), "bt" if bt else "b", list(b), "[batch, N, K]^T" if bt else "[batch, K, N]"))
    return (a[0], a[1], kn[1])


def _cross_entropy_shape(logits, targets):
    if len(logits) != 2 or tuple(targets) != (logits[0],):
        raise ValueError("logits %s, targets %s are not [batch, vocab], [batch]" % (list(logits), list(targets)))
    return ()


def _mlp_shape(x, g, u, d):
    if len(x) != 2 or tuple(g) != tuple(u) or g[1] != x[1] or d[1] != g[0]:
        raise ValueError("x %s with gate %s, up %s, down %s is not a gated MLP" % (list(x), list(g), list(u), list(d)))
    return (x[0], d[0])


def arity(op_type, attrs=None):
    """How many tensors the op type's kernel_fn takes under these contract attributes."""
    attrs = attrs or {}
    n = _ARITY.get(op_type, 1)
    if op_type in ("layernorm", "add_layernorm") and attrs.get("bias") is False:
        n -= 1
    if op_type == "matmul" and attrs.get("bias"):
        n = 3
    return n


def fake_shape(op_type, attrs, shapes):
    """The output shape of the op type's kernel_fn for these argument shapes (the fake implementation's
    rule); ValueError when the shapes break the contract or the op type has no rule."""
    rule = FAKE_SHAPES.get(op_type)
    if rule is None:
        raise ValueError("op type %s has no fake implementation" % op_type)
    n = arity(op_type, attrs)
    if len(shapes) != n:
        raise ValueError("%s's kernel takes %d tensors under its contract, given %d" % (op_type, n, len(shapes)))
    return rule(attrs or {}, *[tuple(s) for s in shapes])


def custom_op_api(torch_module=torch):
    """("custom_op", "") on torch >= 2.4 (torch.library.custom_op + register_fake), ("library", "") on
    2.1-2.3 (torch.library.Library define/impl + impl_abstract), or (None, why) on an older torch,
    whose kernels stay plain Python calls."""
    lib = getattr(torch_module, "library", None)
    if lib is not None and hasattr(lib, "custom_op") and hasattr(lib, "register_fake"):
        return "custom_op", ""
    if lib is not None and hasattr(lib, "Library") and hasattr(lib, "impl_abstract"):
        return "library", ""
    return None, ("torch %s cannot register custom ops with fake implementations (torch.library, 2.1+): the "
                  "kernels are plain Python calls%s" % (getattr(torch_module, "__version__", "?"),
                                                        "" if hasattr(torch_module, "compile") else
                                                        " (and this torch has no torch.compile)"))


def _positional(fn, n):
    """kernel_fn behind an n-tensor signature with annotations (custom_op reads its schema from them);
    the output in the dtype of the first argument, as the contract and the fake say."""
    T = torch.Tensor

    def out(a, y):
        return y if y.dtype == a.dtype else y.to(a.dtype)
    if n == 1:
        def impl(a: T) -> T:
            return out(a, fn(a))
    elif n == 2:
        def impl(a: T, b: T) -> T:
            return out(a, fn(a, b))
    elif n == 3:
        def impl(a: T, b: T, c: T) -> T:
            return out(a, fn(a, b, c))
    elif n == 4:
        def impl(a: T, b: T, c: T, d: T) -> T:
            return out(a, fn(a, b, c, d))
    else:
        def impl(a: T, b: T, c: T, d: T, e: T) -> T:
            return out(a, fn(a, b, c, d, e))
    return impl


_OPS = {}       # (op name, n) -> [(kernel_fn, op), ...]: an op name is registered once per process
_LIBRARIES = []  # torch.library.Library fragments (2.1-2.3): dropping one unregisters its ops


def custom_op(name, op_type, fn, attrs=None):
    """kernel_fn as a torch.library custom op with a fake implementation, so torch.compile treats it as
    one opaque node instead of tracing into (or breaking on) it; None where custom_op_api() says the
    torch cannot, or the op type has no fake rule. The same function under the same name gets the same
    op again (a name is registered once per process); another function a fresh name."""
    api, _ = custom_op_api()
    if api is None or op_type not in FAKE_SHAPES:
        return None
    n = arity(op_type, attrs)
    known = _OPS.setdefault((op_name(name), n), [])
    for f, op in known:
        if f is fn:
            return op
    qual = op_name(name) + ("_%d" % len(known) if known else "") + ("" if n == arity(op_type) else "_a%d" % n)
    impl = _positional(fn, n)

    def fake(*args):
        return args[0].new_empty(fake_shape(op_type, attrs, [a.shape for a in args]))
    if api == "custom_op":
        op = torch.library.custom_op(qual, mutates_args=())(impl)
        op.register_fake(fake)
    else:
        ns, short = qual.split("::")
        lib = torch.library.Library(ns, "FRAGMENT")
        lib.define("%s(%s) -> Tensor" % (short, ", ".join("Tensor a%d" % i for i in range(n))))
        lib.impl(short, impl, "CompositeExplicitAutograd")
        torch.library.impl_abstract(qual, lib=lib)(fake)
        _LIBRARIES.append(lib)
        op = getattr(getattr(torch.ops, ns), short).default
    known.append((fn, op))
    return op


def as_custom_ops(kernels):
    """Each kernel's call made its custom op (for a model about to be compiled); a kernel that cannot be
    one keeps its plain call, and its report says why (`call`)."""
    _, why = custom_op_api()
    for k in kernels:
        op = custom_op(k.name, k.op_type, k.fn, k.attrs)
        k.call = op if op is not None else k.fn
        if k.op_type in REGION_OPS:
            # regions.py: the plug's bookkeeping (ids, weak references) would break the graph, and inductor
            # fuses the add and the norm itself; the compiled model runs compile's kernel, not this one.
            k.call_note = STEPS_ASIDE
        else:
            k.call_note = ("custom op %s" % op_name(k.name) if op is not None else why or
                           "op type %s has no fake implementation: a plain Python call" % k.op_type)
    return kernels


# What a region's report says instead of a custom op: its plug steps aside while torch.compile traces (the
# compiled graph holds no node of it).
STEPS_ASIDE = "steps aside under torch.compile: inductor fuses the residual add and the norm itself"


# The regions' custom-op rules (regions.py): (x, residual, weight[, bias]) -> out[2, M, N].
def _region_shape(x, r, w):
    if tuple(r) != tuple(x):
        raise ValueError("residual %s is not x's shape %s" % (list(r), list(x)))
    return (2,) + _same_last(x, w, "weight")


FAKE_SHAPES["add_rmsnorm"] = lambda attrs, x, r, w: _region_shape(x, r, w)
FAKE_SHAPES["add_layernorm"] = lambda attrs, x, r, w, *b: _region_shape(x, r, w)
_ARITY.update({"add_rmsnorm": 3, "add_layernorm": 4})
