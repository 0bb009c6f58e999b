"""Plugging kernels into a model at the call sites the profiler recorded, and taking them out again.

Standalone on purpose: this file depends on torch and the standard library only, so that an exported
package (autokernel-cli export) carries it verbatim and a user's code gets exactly what verify
measured.

A kernel is a kernel.py module (KERNEL_TYPE, kernel_fn) plus the qualified names of the modules it
ran in ("blocks.3.attn"). Two ways in:

- module level: the module *is* the op (nn.Linear for matmul; an RMSNorm class; a SwiGLU MLP; a
  rotary module holding its cos/sin tables): its forward is replaced for this instance;
- function level: the op is a torch function called inside the module (F.softmax, F.layer_norm,
  F.scaled_dot_product_attention, F.cross_entropy, F.gelu, F.silu, torch.sum, torch.matmul): while
  the module runs, a TorchFunctionMode routes that function to the kernel.

A kernel's contract is its module's `CONTRACT` dict (docs/contracts.md: op type, callable, attrs):
a call routes only when its own arguments equal the contract's attributes (eps, weight offset, bias
present, causal, scale, K/V heads, approximate GELU, rotary layout). A kernel without CONTRACT has
the defaults, the contract every earlier kernel had (DEFAULT_ATTRS). A NeoX rotary (rotate_half) is
plugged at function level: the model's own apply_rotary_pos_emb, named by the contract's callable,
is replaced in its Python module while plugged, and routes only while a call-site module runs.

Every call whose arguments do not fit the kernel's contract (another dtype, a non-causal mask, an
eps the kernel does not implement) falls back to PyTorch and is counted, so the report says what
really ran. Nothing is skipped silently: a kernel that cannot be plugged says why.
"""

import copy
import inspect
import math
import re
import threading
import types
import weakref

import torch
import torch.nn.functional as F

try:
    from torch.overrides import TorchFunctionMode
except ImportError:  # torch < 1.13
    TorchFunctionMode = None

FUNCTION_OPS = {
    "softmax": ("softmax",),
    "layernorm": ("layer_norm",),
    "flash_attention": ("scaled_dot_product_attention",),
    "cross_entropy": ("cross_entropy",),
    "gelu": ("gelu",),
    "silu": ("silu",),
    "reduce": ("sum",),
    "matmul": ("linear", "matmul", "__matmul__", "mm"),
    "bmm": ("matmul", "__matmul__", "bmm"),
}
MODULE_OPS = ("rmsnorm", "fused_mlp", "rotary_embedding")
RMSNORM_EPS = 1e-6          # the default rmsnorm contract (a kernel without CONTRACT)
LAYERNORM_EPS = 1e-5        # the default layernorm contract
# The contract attributes every kernel without a CONTRACT had (docs/contracts.md, defaults first).
DEFAULT_ATTRS = {
    "rmsnorm": {"eps": RMSNORM_EPS, "offset": 0.0},
    "layernorm": {"eps": LAYERNORM_EPS, "bias": True},
    "flash_attention": {"causal": True, "scale": None, "kv_heads": None},
    "matmul": {"bias": False, "activation": "none"},
    "bmm": {"b_transposed": False},
    "gelu": {"approximate": "tanh"},
    "rotary_embedding": {"layout": "interleaved"},
}
_CONTRACT_META = ("op_type", "callable", "dtype", "sites", "refused")
MLP_NAMES = (("w_gate", "w_up", "w_down"), ("gate_proj", "up_proj", "down_proj"), ("w1", "w3", "w2"))

_state = threading.local()


def _compiling():
    """True while torch.compile traces: the plugs must then be plain tensor code (no thread-locals, no
    id()-keyed caches), or Dynamo guards on them and recompiles for every weight."""
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and hasattr(compiler, "is_compiling") and compiler.is_compiling())


def _in_kernel():
    if _compiling():
        return False        # a compiled graph calls kernels as opaque custom ops: nothing to re-route
    return getattr(_state, "depth", 0) > 0


class _Running:
    def __enter__(self):
        _state.depth = getattr(_state, "depth", 0) + 1

    def __exit__(self, *exc):
        _state.depth -= 1


def contract_of(module):
    """The kernel module's CONTRACT dict, or None (a kernel from before contracts)."""
    c = getattr(module, "CONTRACT", None)
    return dict(c) if isinstance(c, dict) else None


def _same(a, b, rel=1e-12):
    """Two floats equal within `rel` relative (None equals only None)."""
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    return abs(a - b) <= rel * max(abs(a), abs(b))


class Kernel:
    """One kernel: its function, op type, dtype, contract and the module names where it is to run.

    contract: the kernel module's CONTRACT (the attributes, as extract writes them; or the folder's
    whole contract object {"op_type", "callable", "attrs", ...}), or None: DEFAULT_ATTRS, the contract
    of every kernel from before contracts. callable: the folder's contract's callable
    ("function:pkg.mod.apply_rotary_pos_emb") when CONTRACT does not carry it."""

    def __init__(self, name, op_type, fn, sites, dtype=None, call=None, contract=None, callable=None):
        self.name, self.op_type, self.fn, self.sites = name, op_type, fn, list(sites)
        self.dtype = dtype                  # torch dtype the kernel was judged in (None: any)
        self.call = call or fn              # what adapters call: fn, or a torch.library custom op
        self.contract = dict(contract) if isinstance(contract, dict) else None
        self.contracted = self.contract is not None
        self.attrs = dict(DEFAULT_ATTRS.get(op_type, {}))
        if self.contract:
            given = self.contract.get("attrs")
            if not isinstance(given, dict):
                given = {k: v for k, v in self.contract.items() if k not in _CONTRACT_META}
            self.attrs.update(given)
        self.callable = callable or (self.contract or {}).get("callable") or ""
        self.routed = 0
        self.fallbacks = {}                 # reason -> count
        self.others = {}                    # reason -> count: calls another folder's contract takes
        self.plugged_sites = []
        self.unplugged = {}                 # site -> reason
        self.call_note = ""                 # how a compiled model calls it (as_custom_ops), "" in eager

    def fallback(self, reason):
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        return None

    def report(self):
        out = {"kernel": self.name, "op_type": self.op_type, "attrs": dict(self.attrs),
               "plugged_sites": list(self.plugged_sites),
               "unplugged_sites": dict(self.unplugged), "routed_calls": self.routed,
               "fallback_calls": dict(self.fallbacks)}
        if self.others:
            out["other_calls"] = dict(self.others)
        if self.call_note:
            out["call"] = self.call_note
        return out

    def run(self, *args):
        if _compiling():
            return self.call(*args)
        with _Running():
            out = self.call(*args)
        self.routed += 1
        return out


def _rows(x):
    return x.reshape(-1, x.shape[-1])


def _fits(kernel, *tensors):
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            return "an argument is not a tensor"
        if kernel.dtype is not None and t.is_floating_point() and t.dtype != kernel.dtype:
            return "dtype %s, the kernel was judged in %s" % (str(t.dtype)[6:], str(kernel.dtype)[6:])
    return None


# --- function-level adapters: (kernel, args, kwargs) -> output, or None to fall back -------------

def _softmax(k, args, kwargs):
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if kwargs.get("dtype") is not None or (len(args) > 2 and args[2] is not None):
        return k.fallback("softmax with a dtype argument")
    why = _fits(k, x)
    if why:
        return k.fallback(why)
    if dim is None or dim not in (-1, x.dim() - 1):
        return k.fallback("softmax over a dimension other than the last")
    return k.run(_rows(x).contiguous()).view(x.shape)


def _layer_norm(k, args, kwargs):
    names = ("input", "normalized_shape", "weight", "bias", "eps")
    a = dict(zip(names, args))
    a.update(kwargs)
    x, w, b = a.get("input"), a.get("weight"), a.get("bias")
    with_bias = bool(k.attrs.get("bias", True))
    if w is None:
        return k.fallback("layer_norm without weight")
    if with_bias and b is None:
        return k.fallback("layer_norm without bias, the kernel adds one" if k.contracted
                          else "layer_norm without weight or bias")
    if not with_bias and b is not None:
        return k.fallback("layer_norm with a bias, the kernel has none")
    why = _fits(k, x, w, *([b] if b is not None else []))
    if why:
        return k.fallback(why)
    if tuple(a.get("normalized_shape", ())) != (x.shape[-1],):
        return k.fallback("normalized over more than the last dimension")
    eps, want = float(a.get("eps", 1e-5)), float(k.attrs.get("eps", LAYERNORM_EPS))
    if not _same(eps, want):
        return k.fallback("eps %g, the kernel implements %g" % (eps, want))
    if with_bias:
        return k.run(_rows(x).contiguous(), w, b).view(x.shape)
    return k.run(_rows(x).contiguous(), w).view(x.shape)


def _sdpa(k, args, kwargs):
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale")
    a = dict(zip(names, args))
    a.update(kwargs)
    q, kk, v = a.get("query"), a.get("key"), a.get("value")
    why = _fits(k, q, kk, v)
    if why:
        return k.fallback(why)
    if a.get("attn_mask") is not None:
        return k.fallback("an explicit attn_mask (no kernel contract takes a mask)")
    if float(a.get("dropout_p") or 0) != 0:
        return k.fallback("attention with dropout")
    causal, want_causal = bool(a.get("is_causal")), bool(k.attrs.get("causal", True))
    if causal != want_causal:
        return k.fallback("causal attention, the kernel is not causal" if causal
                          else "not causal, the kernel is causal")
    if q.dim() != 4 or kk.dim() != 4 or v.dim() != 4:
        return k.fallback("q, k, v not [B, H, S, D]")
    heads, kv_heads, want_kv = q.shape[1], kk.shape[1], k.attrs.get("kv_heads")
    if kv_heads != heads:
        legacy_gqa = not k.contracted and a.get("enable_gqa")
        if not kv_heads or heads % kv_heads or not (want_kv == kv_heads or legacy_gqa):
            return k.fallback("grouped-query with %d K/V heads, the kernel expects %s" % (kv_heads, want_kv or heads))
        # Share each KV head the way SDPA's enable_gqa does, then the kernel's [B, H, S, D] contract holds.
        kk = kk.repeat_interleave(heads // kv_heads, dim=1)
        v = v.repeat_interleave(heads // v.shape[1], dim=1)
    elif want_kv not in (None, heads):
        return k.fallback("%d K/V heads, the kernel expects %d" % (kv_heads, want_kv))
    if not (q.shape == kk.shape == v.shape):
        return k.fallback("q, k, v of different shapes")
    default = 1.0 / math.sqrt(q.shape[-1])
    scale = a.get("scale")
    scale = default if scale is None else float(scale)
    want = k.attrs.get("scale")
    want = default if want is None else float(want)
    if not _same(scale, want, 1e-6):
        return k.fallback("scale %g, the kernel implements %g" % (scale, want))
    return k.run(q.contiguous(), kk.contiguous(), v.contiguous())


def _cross_entropy(k, args, kwargs):
    names = ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction",
             "label_smoothing")
    a = dict(zip(names, args))
    a.update(kwargs)
    x, t = a.get("input"), a.get("target")
    why = _fits(k, x)
    if why:
        return k.fallback(why)
    if x.dim() != 2 or not isinstance(t, torch.Tensor) or t.dim() != 1 or t.dtype != torch.int64:
        return k.fallback("logits not [batch, vocab] or targets not int64 [batch]")
    if a.get("weight") is not None or a.get("reduction", "mean") != "mean" or float(a.get("label_smoothing") or 0):
        return k.fallback("class weights, a reduction other than mean, or label smoothing")
    return k.run(x.contiguous(), t.contiguous())


def _gelu(k, args, kwargs):
    x = args[0]
    approximate = kwargs.get("approximate", args[1] if len(args) > 1 else "none")
    want = k.attrs.get("approximate", "tanh")
    if approximate != want:
        return k.fallback("exact gelu (the kernel is the tanh approximation)" if want == "tanh"
                          else "gelu approximate=%s, the kernel is %s" % (approximate, "exact" if want == "none" else want))
    why = _fits(k, x)
    return k.fallback(why) if why else k.run(_rows(x).contiguous()).view(x.shape)


def _silu(k, args, kwargs):
    x = args[0]
    if kwargs.get("inplace") or (len(args) > 1 and args[1]):
        return k.fallback("in-place silu")
    why = _fits(k, x)
    return k.fallback(why) if why else k.run(_rows(x).contiguous()).view(x.shape)


def _sum(k, args, kwargs):
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if isinstance(dim, (list, tuple)) and len(dim) == 1:
        dim = dim[0]
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    if not isinstance(x, torch.Tensor) or dim not in (-1, x.dim() - 1) or keepdim or kwargs.get("dtype"):
        return k.fallback("a sum other than over the last dimension")
    why = _fits(k, x)
    return k.fallback(why) if why else k.run(_rows(x).contiguous()).view(x.shape[:-1])


class _WeightCache:
    """W^T made contiguous once per weight (the matmul contract takes B[K, N]), kept while the weight
    is unchanged."""

    def __init__(self):
        self.cache = {}

    def get(self, w):
        key = id(w)
        hit = self.cache.get(key)
        if hit is None or hit[0] is not w or hit[1] != w._version:
            with torch.no_grad():
                hit = (w, w._version, w.detach().t().contiguous())
            self.cache[key] = hit
        return hit[2]


_weights = _WeightCache()


def _linear_call(k, x, w, b, wt=None):
    why = _fits(k, x, w) or ("a bias of another dtype" if b is not None and b.dtype != x.dtype else None)
    if why:
        return k.fallback(why)
    with_bias = bool(k.attrs.get("bias", False))
    if with_bias and b is None:
        return k.fallback("linear without a bias, the kernel adds one")
    if not with_bias and b is not None and k.contracted:
        return k.fallback("linear with a bias, the kernel has none")
    act = k.attrs.get("activation", "none")
    marks = getattr(k, "fused_marks", None)
    if act != "none" and marks is None:
        return k.fallback("the kernel applies %s, and no plug takes the model's own %s out" % (act, act))
    if wt is None:
        wt = w.detach().t().contiguous() if _compiling() else _weights.get(w)
    if with_bias or act != "none":
        y = k.run(*((_rows(x).contiguous(), wt, b) if with_bias else (_rows(x).contiguous(), wt)))
        y = y.view(*x.shape[:-1], w.shape[0])   # the bias and the activation in the kernel's epilogue
        if act != "none":
            marks.mark(y, k)                    # the model's own activation of exactly y returns it as is
        return y
    y = k.run(_rows(x).contiguous(), wt)
    if b is not None:
        y = y + b           # a kernel without CONTRACT: the bias added after, as before contracts
    return y.view(*x.shape[:-1], w.shape[0])


def _matmul(k, args, kwargs):
    name = kwargs.pop("__name", "")
    if name == "linear":
        x, w = args[0], args[1]
        b = args[2] if len(args) > 2 else kwargs.get("bias")
        return _linear_call(k, x, w, b)
    a, bmat = args[0], args[1]
    if not isinstance(bmat, torch.Tensor) or bmat.dim() != 2 or not isinstance(a, torch.Tensor) or a.dim() < 2:
        if isinstance(bmat, torch.Tensor) and bmat.dim() > 2 and math.prod(bmat.shape[:-2]) > 1:
            return _other(k, "a matmul with a batched right operand (a bmm folder's call)")
        return k.fallback("a batched matmul (the kernel multiplies [M, K] by [K, N])")
    why = _fits(k, a, bmat)
    if why:
        return k.fallback(why)
    if k.attrs.get("bias"):
        return k.fallback("a matmul without a bias, the kernel adds one")
    return k.run(_rows(a).contiguous(), bmat.contiguous()).view(*a.shape[:-1], bmat.shape[1])


def _other(k, reason):
    """A call at the site that is not this kernel's but another folder's (attention's q @ k^T beside
    probs @ v): left to PyTorch, counted apart from fallbacks."""
    k.others[reason] = k.others.get(reason, 0) + 1
    return None


def b_transposed(b):
    """The right operand is the transpose of a contiguous tensor's last two dims (`k.transpose(-2, -1)`):
    the rule the harness's bmm contract reads from the profiler's recorded strides."""
    return (b.dim() >= 2 and not b.is_contiguous() and b.stride(-2) == 1 and b.stride(-1) != 1
            and b.shape[-1] > 1 and b.shape[-2] > 1)


def _bmm(k, args, kwargs):
    """torch.matmul / torch.bmm / `@` of A[..., M, K] and B[..., K, N] with the same leading dims, routed as
    kernel_fn(A[batch, M, K], B[batch, K, N]), or kernel_fn(A, Bt[batch, N, K]) under b_transposed: Bt is
    B's own storage when B is `k.transpose(-2, -1)` of a contiguous k (no copy)."""
    kwargs.pop("__name", "")
    a = args[0] if args else kwargs.pop("input", None)
    b = args[1] if len(args) > 1 else kwargs.pop("other", kwargs.pop("mat2", None))
    if kwargs:
        return k.fallback("a batched matmul with %s (the kernel returns a new tensor)" % ", ".join(sorted(kwargs)))
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return k.fallback("an argument is not a tensor")
    if b.dim() < 3 or math.prod(b.shape[:-2]) == 1:
        return _other(k, "a matmul with an unbatched right operand (a matmul folder's call)")
    if a.dim() != b.dim() or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        return k.fallback("a batched matmul broadcasting A %s against B %s (the kernel takes one batch)"
                          % (list(a.shape), list(b.shape)))
    why = _fits(k, a, b)
    if why:
        return k.fallback(why)
    bt = bool(k.attrs.get("b_transposed", False))
    if b_transposed(b) != bt:
        return _other(k, "a right operand %s (another bmm folder's layout)"
                      % ("transposed" if not bt else "not transposed"))
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    a3 = a.reshape(-1, M, K).contiguous()
    b3 = b.transpose(-2, -1).reshape(-1, N, K) if bt else b.reshape(-1, K, N)
    return k.run(a3, b3.contiguous()).view(*a.shape[:-2], M, N)


class _FusedMarks:
    """Outputs of linears whose kernel already applied the activation that follows them in the model
    (a matmul contract's `activation`): the model's own activation call on exactly such a tensor
    (same object, unchanged since) returns it as it is. Weak references: nothing is kept alive."""

    def __init__(self):
        self.items = {}
        self.missed = []        # kernels whose marked output was freed before an activation took it

    def mark(self, t, k):
        old = self.items.pop(id(t), None)
        if old is not None:
            self.missed.append(old[2])
        try:
            self.items[id(t)] = (weakref.ref(t), t._version, k)
        except TypeError:
            pass

    def take(self, x, family):
        entry = self.items.get(id(x)) if isinstance(x, torch.Tensor) else None
        if entry is None or entry[0]() is not x or entry[1] != x._version:
            return False
        if family and not entry[2].attrs.get("activation", "").startswith(family):
            return False
        del self.items[id(x)]
        return True

    def leftover(self):
        """Kernels whose fused output no activation call took (the model applied it again elsewhere,
        or not at all); forgets them."""
        out = self.missed + [k for _, _, k in self.items.values()]
        self.items, self.missed = {}, []
        return out


ACTIVATION_FAMILY = {"gelu": "gelu", "gelu_tanh": "gelu", "silu": "silu", "relu": "relu"}
_ACTIVATION_FUNCTIONS = {"gelu": ("gelu",), "silu": ("silu",), "relu": ("relu", "relu_")}
_ACTIVATION_CLASS = {"gelu": re.compile(r"(?i)gelu"), "silu": re.compile(r"(?i)silu|swish"),
                     "relu": re.compile(r"(?i)relu")}


class _SkipActivation:
    """A route entry: the activation after a fused linear, taken out of the model for its output."""
    op_type = "_skip_activation"

    def __init__(self, marks, family):
        self.marks, self.family = marks, family


def _skip_activation(k, args, kwargs):
    kwargs.pop("__name", "")
    x = args[0] if args else kwargs.get("input")
    return x if k.marks.take(x, k.family) else None


ADAPTERS = {"softmax": _softmax, "layernorm": _layer_norm, "flash_attention": _sdpa,
            "cross_entropy": _cross_entropy, "gelu": _gelu, "silu": _silu, "reduce": _sum, "matmul": _matmul,
            "bmm": _bmm,
            "_skip_activation": _skip_activation}


if TorchFunctionMode is not None:
    class _Route(TorchFunctionMode):
        """Active while one call-site module runs: its kernels' torch functions go to them."""

        def __init__(self, routes, nested):
            super().__init__()
            self.routes = routes            # function name -> [kernel, ...]
            self.nested = nested            # [n]: a child module of the call site is running

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            # Only the call site's own calls: a child module's (its Linear, say) are another site.
            if not _in_kernel() and not self.nested[0]:
                for k in self.routes.get(getattr(func, "__name__", ""), ()):
                    extra = {"__name": func.__name__} if k.op_type in ("matmul", "_skip_activation") else {}
                    out = ADAPTERS[k.op_type](k, args, dict(kwargs, **extra))
                    if out is not None:
                        return out
            return func(*args, **kwargs)


# --- module-level plugs -------------------------------------------------------------------------

EPS_ATTRS = ("eps", "variance_epsilon", "epsilon", "norm_eps", "layer_norm_eps", "rms_norm_eps")


def module_eps(module):
    for name in EPS_ATTRS:
        v = getattr(module, name, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


def _rms_error(module, eps, offset, runs):
    err = 0.0
    for x, w, y in runs:
        ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (offset + w)
        err = max(err, float((y - ref).abs().max()) / max(1.0, float(ref.abs().max())))
    return err


def rmsnorm_mismatch(module, eps, offset):
    """"" when the module computes x * rsqrt(mean(x^2) + eps) * (offset + w), checked once by running a
    float64 copy of it on fresh inputs (ordinary and tiny, where eps decides) with its own weight and a
    random one (where the offset shows); else the reason, naming what it computes instead."""
    w = module.weight
    try:
        probe = copy.deepcopy(module).to(dtype=torch.float64)
        probe._forward_hooks.clear()
        probe._forward_pre_hooks.clear()
        vars(probe).pop("forward", None)        # an earlier plug's instance forward is not the module
        dtype, tol = torch.float64, 1e-5
    except Exception:  # noqa: BLE001 - not copyable: the module itself, its weight put back after
        probe, dtype = module, w.dtype
        tol = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 1e-2}.get(dtype, 1e-4)
    n = w.shape[0]
    g = torch.Generator(device="cpu").manual_seed(4321)
    xs = [torch.randn(4, n, generator=g, dtype=torch.float64), torch.randn(4, n, generator=g, dtype=torch.float64) * 3e-4]
    saved = probe.weight.detach().clone()
    runs = []
    try:
        with torch.no_grad():
            for weight in (saved.to(torch.float64).cpu(), torch.randn(n, generator=g, dtype=torch.float64) * 0.5):
                probe.weight.copy_(weight.to(device=w.device, dtype=probe.weight.dtype))
                for x in xs:
                    y = type(probe).forward(probe, x.to(device=w.device, dtype=dtype))
                    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
                        return "the module does not return one tensor of its input's shape"
                    runs.append((x, weight, y.detach().to("cpu", torch.float64)))
    except Exception as exc:  # noqa: BLE001
        return "the module could not be checked on fresh inputs: %s: %s" % (type(exc).__name__, exc)
    finally:
        with torch.no_grad():
            probe.weight.copy_(saved)
    if _rms_error(module, eps, offset, runs) <= tol:
        return ""
    other = 1.0 - offset if offset in (0.0, 1.0) else 0.0
    if _rms_error(module, eps, other, runs) <= tol:
        return "the module computes x^ * (%g + w), the kernel x^ * (%g + w)" % (other, offset)
    for e in (1e-5, 1e-6, 1e-8, 1e-12):
        for o in (offset, other):
            if not _same(e, eps) and _rms_error(module, e, o, runs) <= tol:
                return "the module computes eps %g (offset %g), the kernel eps %g" % (e, o, eps)
    return "the module is not x * rsqrt(mean(x^2) + %g) * (%g + w) on fresh inputs (error %.3g)" % (
        eps, offset, _rms_error(module, eps, offset, runs))


def _module_forward(kernel, module):
    """A replacement forward for `module`, or a string saying why the module cannot take the kernel."""
    op = kernel.op_type
    if op == "matmul" and ACTIVATION_FAMILY.get(kernel.attrs.get("activation", "none"), "none") == "none" \
            and kernel.attrs.get("activation", "none") != "none":
        return "activation %r: the plug knows gelu, gelu_tanh, silu, relu" % kernel.attrs.get("activation")
    if op == "matmul":
        if not isinstance(module, torch.nn.Linear):
            return None                     # a functional matmul: routed by the mode instead
        def linear(self, x):
            # A frozen plug (a compiled copy) holds W^T as a buffer made once; see Plugged.
            wt = getattr(self, FROZEN_WT, None)
            out = _linear_call(kernel, x, self.weight, self.bias, wt) if not _in_kernel() else None
            return out if out is not None else F.linear(x, self.weight, self.bias)   # a fallback
        return linear
    if op == "rmsnorm":
        w = getattr(module, "weight", None)
        eps = module_eps(module)
        want_eps, want_offset = float(kernel.attrs.get("eps", RMSNORM_EPS)), float(kernel.attrs.get("offset", 0.0))
        if not isinstance(w, torch.Tensor) or w.dim() != 1:
            return "the module has no 1-d weight (the rmsnorm contract scales by weight[N])"
        if eps is not None and not _same(eps, want_eps):
            return "eps %g, the kernel implements %g" % (eps, want_eps)
        why = rmsnorm_mismatch(module, want_eps, want_offset)
        if why:
            return why
        original = type(module).forward

        def rms(self, x):
            why = _fits(kernel, x)
            if why or x.shape[-1] != self.weight.shape[0]:
                kernel.fallback(why or "hidden size differs")
                return original(self, x)
            return kernel.run(_rows(x).contiguous(), self.weight).view(x.shape)
        return rms
    if op == "fused_mlp":
        for names in MLP_NAMES:
            layers = [getattr(module, n, None) for n in names]
            if all(isinstance(m, torch.nn.Linear) for m in layers):
                if any(m.bias is not None for m in layers):
                    return "the MLP's linears have biases (the contract has none)"
                original = type(module).forward

                def mlp(self, x, _names=names):
                    g, u, d = (getattr(self, n) for n in _names)
                    why = _fits(kernel, x, g.weight)
                    if why:
                        kernel.fallback(why)
                        return original(self, x)
                    return kernel.run(_rows(x).contiguous(), g.weight, u.weight, d.weight) \
                        .view(*x.shape[:-1], d.weight.shape[0])
                return mlp
        return "no gate/up/down linears found (%s)" % ", ".join("/".join(n) for n in MLP_NAMES)
    if op == "rotary_embedding":
        cos, sin = getattr(module, "cos", None), getattr(module, "sin", None)
        if not isinstance(cos, torch.Tensor) or not isinstance(sin, torch.Tensor) or cos.dim() != 2:
            return ("the module holds no cos/sin tables [S, D/2] (the kernel rotates interleaved pairs "
                    "with them)")
        original = type(module).forward

        def rope(self, x):
            s = x.shape[-2]
            if x.dim() != 4 or self.cos.shape[-1] * 2 != x.shape[-1] or self.cos.shape[0] < s or _fits(kernel, x):
                kernel.fallback(_fits(kernel, x) or "shapes do not fit [B, H, S, D] with cos [S, D/2]")
                return original(self, x)
            return kernel.run(x.contiguous(), self.cos[:s].to(x.dtype).contiguous(),
                              self.sin[:s].to(x.dtype).contiguous())
        return rope
    return None


FROZEN_WT = "_autokernel_weight_t"


# --- function-level plug of a model's own Python function (NeoX rotary) -------------------------

def _rope_neox(k, q, kk, cos, sin, position_ids, unsqueeze_dim):
    """transformers' apply_rotary_pos_emb through the kernel (x[B, H, S, D], cos[S, D/2], sin[S, D/2]):
    (q_embed, k_embed), or None after counting the reason to fall back."""
    if unsqueeze_dim not in (1, -3):
        return k.fallback("q/k are not [B, H, S, D] (unsqueeze_dim %s)" % (unsqueeze_dim,))
    if not all(isinstance(t, torch.Tensor) for t in (q, kk, cos, sin)):
        return k.fallback("an argument is not a tensor")
    if position_ids is not None and cos.dim() == 2:
        cos, sin = cos[position_ids], sin[position_ids]         # older transformers: tables [S, D] indexed here
    if cos.dim() == 2:
        cos, sin = cos.unsqueeze(0), sin.unsqueeze(0)
    if q.dim() != 4 or kk.dim() != 4 or cos.dim() != 3 or sin.shape != cos.shape or \
            cos.shape[-1] != q.shape[-1] or cos.shape[-2] != q.shape[-2] or kk.shape[-2:] != q.shape[-2:]:
        return k.fallback("shapes do not fit q, k [B, H, S, D] with cos/sin [B or 1, S, D]")
    why = _fits(k, q, kk)
    if why:
        return k.fallback(why)
    if cos.shape[0] > 1 and not (torch.equal(cos, cos[:1].expand_as(cos)) and torch.equal(sin, sin[:1].expand_as(sin))):
        return k.fallback("cos/sin differ between batch rows (per-sequence positions; the kernel takes one table)")
    half = q.shape[-1] // 2
    c, s = cos[0], sin[0]
    if not (torch.equal(c[:, :half], c[:, half:]) and torch.equal(s[:, :half], s[:, half:])):
        return k.fallback("cos/sin halves differ (not the NeoX layout's duplicated halves)")
    c, s = c[:, :half].to(q.dtype).contiguous(), s[:, :half].to(q.dtype).contiguous()
    return k.run(q.contiguous(), c, s), k.run(kk.contiguous(), c, s)


ROTARY_FUNCTION = "apply_rotary_pos_emb"     # transformers' name, looked up when the contract names none


def _callable_name(spec):
    """("python.module", "qualname") of a contract callable "function:pkg.mod.fn"; ("", "") if none."""
    if not spec or not spec.startswith("function:"):
        return "", ""
    name = spec[len("function:"):]
    if name.startswith("torch."):
        return "", ""
    module, _, qual = name.rpartition(".")
    return module, qual


def _function_globals(module, qual):
    """The globals dicts the module's forward code looks `qual` up in (its class and bases)."""
    out = []
    for cls in type(module).__mro__:
        fwd = cls.__dict__.get("forward")
        g = getattr(fwd, "__globals__", None)
        if g is not None and qual in g and all(g is not o for o in out):
            out.append(g)
    return out


# --- regions (#40): the residual add and the norm that reads its sum, as one kernel ---------------
#
# A region site is "NORM_SITE@add:ADD_SITE#ORDINAL" (profiler/python/akregions.py): the norm module, and
# the add that feeds it named by the module whose own code runs it and its ordinal among that code's
# residual adds (`x + y` / `torch.add(x, y)` of two float tensors of one shape, counted the way the
# profiler's capture counted them). At that add the kernel runs on (x, residual, norm.weight[, bias])
# and returns out[2, M, N]: the model gets out[0] as the sum; out[1], the normalised rows, waits for the
# norm module, whose forward returns it only for exactly that tensor (same object, unchanged since).
# Anything else the norm is called on runs its own forward, counted as a fallback; a sum no norm takes
# is counted too. Exact by construction: the model sees the kernel's sum where its add was, and the
# norm's output only where the norm was called on that very sum.

REGION_OPS = ("add_rmsnorm", "add_layernorm")
_REGION_SITE = re.compile(r"^(?P<norm>.+)@add:(?P<add>.+)#(?P<ordinal>\d+)$")
_ADD_FUNCTIONS = ("add", "__add__", "__radd__")


def region_site(site):
    """(norm site, add site, ordinal) of a region site string, or None for a plain module name."""
    m = _REGION_SITE.match(site or "")
    return (m.group("norm"), m.group("add"), int(m.group("ordinal"))) if m else None


def _is_residual_add(args, kwargs):
    """The capture's predicate (akcapture.is_residual_add), on a call already known to be an add."""
    if len(args) != 2 or kwargs or not all(isinstance(a, torch.Tensor) for a in args):
        return False
    a, b = args
    return a.is_floating_point() and a.dtype == b.dtype and a.shape == b.shape and a.dim() >= 2


def layernorm_mismatch(module, eps, bias):
    """"" when the module computes F.layer_norm(x, (N,), weight, bias, eps) (nn.LayerNorm itself, or a
    class checked on fresh float64 inputs, ordinary and tiny); else the reason."""
    w, b = getattr(module, "weight", None), getattr(module, "bias", None)
    if not isinstance(w, torch.Tensor) or w.dim() != 1:
        return "the module has no 1-d weight (the layernorm contract scales by weight[N])"
    if bias != isinstance(b, torch.Tensor):
        return "the module %s a bias, the kernel %s" % ("has" if isinstance(b, torch.Tensor) else "has no",
                                                         "adds one" if bias else "has none")
    own = module_eps(module)
    if own is not None and not _same(own, eps):
        return "eps %g, the kernel implements %g" % (own, eps)
    if type(module).forward is torch.nn.LayerNorm.forward and tuple(module.normalized_shape) == (w.shape[0],):
        return ""
    try:
        probe = copy.deepcopy(module).to(dtype=torch.float64)
        probe._forward_hooks.clear()
        probe._forward_pre_hooks.clear()
        vars(probe).pop("forward", None)
        g = torch.Generator(device="cpu").manual_seed(4321)
        err = 0.0
        with torch.no_grad():
            for scale in (1.0, 3e-4):
                x = (torch.randn(4, w.shape[0], generator=g, dtype=torch.float64) * scale).to(w.device)
                y = type(probe).forward(probe, x)
                ref = F.layer_norm(x, (w.shape[0],), probe.weight, probe.bias if bias else None, eps)
                err = max(err, float((y - ref).abs().max()) / max(1.0, float(ref.abs().max())))
    except Exception as exc:  # noqa: BLE001
        return "the module could not be checked on fresh inputs: %s: %s" % (type(exc).__name__, exc)
    return "" if err <= 1e-5 else "the module is not F.layer_norm(x, weight, %s, %g) on fresh inputs (error %.3g)" % (
        "bias" if bias else "None", eps, err)


def _region_norm_check(k, module):
    if k.op_type == "add_rmsnorm":
        w = getattr(module, "weight", None)
        if not isinstance(w, torch.Tensor) or w.dim() != 1:
            return "the module has no 1-d weight (the rmsnorm contract scales by weight[N])"
        eps, offset = float(k.attrs.get("eps", RMSNORM_EPS)), float(k.attrs.get("offset", 0.0))
        own = module_eps(module)
        if own is not None and not _same(own, eps):
            return "eps %g, the kernel implements %g" % (own, eps)
        return rmsnorm_mismatch(module, eps, offset)
    return layernorm_mismatch(module, float(k.attrs.get("eps", LAYERNORM_EPS)), bool(k.attrs.get("bias", True)))


class _RegionAdds:
    """A route entry at an add site: counts the site's residual adds per call, runs the region kernel
    at the ordinals the profile recorded, and keeps each normalised output for its norm."""
    op_type = "_region_add"

    def __init__(self):
        self.count = 0
        self.targets = {}           # ordinal -> (kernel, norm module)
        self.pending = {}           # id(sum) -> (weakref to it, its version, norm module, y, kernel)

    def reset(self, *_):
        self.count = 0

    def run(self, args, kwargs):
        # Under torch.compile the region steps aside: inductor fuses the add and the norm itself, and
        # this bookkeeping (ids, weak references) would break the graph.
        if _compiling() or not _is_residual_add(args, kwargs):
            return None
        ordinal, self.count = self.count, self.count + 1
        target = self.targets.get(ordinal)
        if target is None:
            return None
        k, norm = target
        x, r = args
        params = [norm.weight] + ([norm.bias] if k.op_type == "add_layernorm" and k.attrs.get("bias", True) else [])
        why = _fits(k, x, r, *params)
        if why or x.shape[-1] != norm.weight.shape[0]:
            return k.fallback(why or "hidden size differs from the norm's weight")
        out = k.run(_rows(x).contiguous(), _rows(r).contiguous(), *params)
        h, y = out[0].view(x.shape), out[1].view(x.shape)
        try:
            self.pending[id(h)] = (weakref.ref(h), h._version, norm, y, k)
        except TypeError:
            return None
        return h

    def take(self, norm, x):
        entry = self.pending.pop(id(x), None) if isinstance(x, torch.Tensor) else None
        if entry is None or entry[0]() is not x or entry[1] != x._version or entry[2] is not norm:
            return None
        return entry[3]

    def leftover(self):
        out = [e[4] for e in self.pending.values()]
        self.pending = {}
        return out


def _region_add(entry, args, kwargs):
    return entry.run(args, kwargs)


ADAPTERS["_region_add"] = _region_add


def _plug_region(plugged, k, site, modules, routes_by_module):
    """Plugs a region kernel at one region site; "" or why it cannot."""
    parsed = region_site(site)
    if parsed is None:
        return "%r is not a region site (NORM@add:SITE#N): profile the model again" % site
    norm_site, add_site, ordinal = parsed
    norm = modules.get("" if norm_site == "<model>" else norm_site)
    owner = modules.get("" if add_site == "<model>" else add_site)
    if norm is None or owner is None:
        return "no module named %r in this model" % (norm_site if norm is None else add_site)
    why = _region_norm_check(k, norm)
    if why:
        return why
    routes = routes_by_module.setdefault(add_site, (owner, {}))[1]
    adds = next((e for e in routes.get("add", ()) if isinstance(e, _RegionAdds)), None)
    if adds is None:
        adds = _RegionAdds()
        for name in _ADD_FUNCTIONS:
            routes.setdefault(name, []).insert(0, adds)
        plugged._handles.append(owner.register_forward_pre_hook(adds.reset))
        def unread(*_args, _adds=adds):
            for k2 in _adds.leftover():     # a forward hook returning something would replace the output
                k2.fallback("the sum of a residual add no norm read (the kernel's normalised output was not used)")
        plugged._handles.append(plugged.model.register_forward_hook(unread))
    if ordinal in adds.targets:
        return "the add %s#%d already feeds another region" % (add_site, ordinal)
    adds.targets[ordinal] = (k, norm)
    norms = plugged.__dict__.setdefault("_region_norms", {})     # id(norm module) -> [_RegionAdds]
    if id(norm) not in norms:
        sources = norms[id(norm)] = []
        original = type(norm).forward
        plugged._forwards.append((norm, "forward" in vars(norm), vars(norm).get("forward")))

        def forward(self, x, *args, **kwargs):
            if _compiling():
                return original(self, x, *args, **kwargs)
            if not args and not kwargs:
                for src in sources:
                    y = src.take(self, x)
                    if y is not None:
                        return y
            k.fallback("%s was called on another tensor than its region's sum" % norm_site)
            return original(self, x, *args, **kwargs)
        norm.forward = types.MethodType(forward, norm)
    if adds not in norms[id(norm)]:
        norms[id(norm)].append(adds)
    return ""


class Plugged:
    """Kernels plugged into one model; restore() puts the model back exactly as it was.

    frozen=True is for a model whose weights do not change from here on (a copy about to be
    compiled): each plugged Linear gets its W^T as a buffer, made once, instead of the eager path's
    cache that follows weight updates."""

    def __init__(self, model, kernels, frozen=False):
        self.model, self.kernels = model, list(kernels)
        self._buffers = []
        self._handles, self._forwards = [], []
        self._patched = []                  # (globals dict, name, original function)
        self._mode_stacks = []              # each call-site hook's entered route modes
        self._marks = None
        self._wrapped_acts = set()
        modules = dict(model.named_modules())
        routes_by_module = {}
        for k in self.kernels:
            fused = k.op_type == "matmul" and k.attrs.get("activation", "none") != "none"
            if fused:
                if self._marks is None:
                    self._marks = _FusedMarks()
                    self._handles.append(model.register_forward_hook(self._check_fused))
                k.fused_marks = self._marks
            for site in k.sites:
                if k.op_type in REGION_OPS:             # the residual add + norm section above
                    why = _plug_region(self, k, site, modules, routes_by_module)
                    if why:
                        k.unplugged[site] = why
                    else:
                        k.plugged_sites.append(site)
                    continue
                module = modules.get(site if site != "<model>" else "")
                if module is None:
                    k.unplugged[site] = "no module named %r in this model" % site
                    continue
                if k.op_type == "rotary_embedding" and k.attrs.get("layout") == "neox":
                    why = self._plug_function(k, module)
                    if why:
                        k.unplugged[site] = why
                    else:
                        k.plugged_sites.append(site)
                    continue
                forward = _module_forward(k, module)
                if isinstance(forward, str):
                    k.unplugged[site] = forward
                    continue
                if forward is not None:
                    if frozen and k.op_type == "matmul" and FROZEN_WT not in module._buffers:
                        with torch.no_grad():
                            module.register_buffer(FROZEN_WT, module.weight.detach().t().contiguous(), persistent=False)
                        self._buffers.append(module)
                    self._forwards.append((module, "forward" in vars(module), vars(module).get("forward")))
                    module.forward = types.MethodType(forward, module)
                    k.plugged_sites.append(site)
                    continue
                if k.op_type not in FUNCTION_OPS:
                    k.unplugged[site] = "op type %s has no plug" % k.op_type
                    continue
                if TorchFunctionMode is None:
                    k.unplugged[site] = "this torch has no TorchFunctionMode"
                    continue
                routes = routes_by_module.setdefault(site, (module, {}))[1]
                for name in FUNCTION_OPS[k.op_type]:
                    routes.setdefault(name, []).append(k)
                k.plugged_sites.append(site)
            if fused:
                for site in k.plugged_sites:
                    self._skip_activation_near(k, site, modules, routes_by_module)
        for site, (module, routes) in routes_by_module.items():
            self._hook(module, routes)

    def _skip_activation_near(self, k, site, modules, routes_by_module):
        """Where the activation after the linear at `site` runs: the code of the linear's parent (an
        nn.Linear site) or of the site itself (a functional linear), as a torch function or as an
        activation module among its children. Both are taken out for the fused output only."""
        module = modules.get(site if site != "<model>" else "")
        if module is None:
            return
        owner_name = site.rpartition(".")[0] if isinstance(module, torch.nn.Linear) else site
        owner_name = "" if owner_name in ("", "<model>") else owner_name
        owner = modules.get(owner_name)
        if owner is None:
            return
        family = ACTIVATION_FAMILY.get(k.attrs.get("activation"), "")
        skip = _SkipActivation(self._marks, family)
        routes = routes_by_module.setdefault(owner_name or "<model>", (owner, {}))[1]
        for name in _ACTIVATION_FUNCTIONS.get(family, ()):
            if not any(isinstance(r, _SkipActivation) and r.family == family for r in routes.get(name, ())):
                routes.setdefault(name, []).insert(0, skip)     # before a kernel of the activation itself
        pattern = _ACTIVATION_CLASS.get(family)
        for child in owner.children():
            if pattern is None or not pattern.search(type(child).__name__) or id(child) in self._wrapped_acts:
                continue
            self._wrapped_acts.add(id(child))
            original = type(child).forward

            def act_forward(this, x, *args, _orig=original, _family=family, **kwargs):
                if not args and not kwargs and self._marks is not None and self._marks.take(x, _family):
                    return x
                return _orig(this, x, *args, **kwargs)
            self._forwards.append((child, "forward" in vars(child), vars(child).get("forward")))
            child.forward = types.MethodType(act_forward, child)

    def _check_fused(self, model, inputs, output):
        if self._marks is None:
            return
        for k in self._marks.leftover():
            k.fallback("the model's own %s after the linear was not found in its parent's code or activation "
                       "module: it was applied on top of the kernel's" % k.attrs.get("activation"))

    def _plug_function(self, k, module):
        """Routes the model's own rotary function (the contract's callable) to the kernel while `module`
        runs; "" or the reason it cannot."""
        py_module, qual = _callable_name(k.callable)
        if not qual and k.callable:
            return ("a NeoX (rotate_half) rotary is plugged through the model's own function, and the "
                    "contract's callable (%r) names none" % k.callable)
        short = qual.rpartition(".")[2] if qual else ROTARY_FUNCTION
        targets = []
        for g in _function_globals(module, short):
            fn = g[short]
            original = getattr(fn, "_autokernel_original", fn)
            name = "%s.%s" % (getattr(original, "__module__", ""), getattr(original, "__qualname__", ""))
            if (name == "%s.%s" % (py_module, qual)) if qual else isinstance(original, types.FunctionType):
                targets.append(g)
        if not targets:
            if qual:
                return "%s.%s is not what this module's forward calls" % (py_module, qual)
            return ("a NeoX (rotate_half) rotary is plugged through the model's own %s, and this module's "
                    "forward calls none (the contract names no callable)" % ROTARY_FUNCTION)
        gate = getattr(k, "_gate", None)
        if gate is None:
            gate = k._gate = {"active": 0, "nested": 0, "modules": set()}
        if id(module) not in gate["modules"]:
            gate["modules"].add(id(module))
            self._gate_hooks(module, gate)
        for g in targets:
            if any(p[0] is g and p[1] == short for p in self._patched):
                continue
            original = g[short]
            try:
                signature = inspect.signature(original)
            except (TypeError, ValueError):
                return "the signature of %s cannot be read" % qual
            params = list(signature.parameters)
            if len(params) < 4:
                return "%s takes fewer than (q, k, cos, sin)" % qual

            def rotary(*args, _orig=original, _sig=signature, _names=params, **kwargs):
                if gate["active"] and not gate["nested"] and not _in_kernel():
                    try:
                        bound = _sig.bind(*args, **kwargs)
                        bound.apply_defaults()
                    except TypeError:
                        bound = None
                    if bound is not None:
                        a = bound.arguments
                        extra = set(a) - set(_names[:4]) - {"position_ids", "unsqueeze_dim"}
                        if extra and any(a[n] is not None for n in extra):
                            k.fallback("%s called with arguments the kernel does not take (%s)"
                                       % (_orig.__name__, ", ".join(sorted(extra))))
                        else:
                            out = _rope_neox(k, *(a[n] for n in _names[:4]), a.get("position_ids"),
                                             a.get("unsqueeze_dim", 1))
                            if out is not None:
                                return out
                return _orig(*args, **kwargs)
            rotary._autokernel_original = original
            rotary.__name__, rotary.__qualname__ = original.__name__, original.__qualname__
            g[short] = rotary
            self._patched.append((g, short, original))
        return ""

    def _gate_hooks(self, module, gate):
        def pre(mod, inputs):
            gate["active"] += 1

        def post(mod, inputs, output):
            gate["active"] -= 1

        def enter_child(mod, inputs):
            if gate["active"]:
                gate["nested"] += 1

        def leave_child(mod, inputs, output):
            if gate["nested"]:
                gate["nested"] -= 1

        self._handles.append(module.register_forward_pre_hook(pre))
        self._handles.append(module.register_forward_hook(post))
        for child in module.children():
            self._handles.append(child.register_forward_pre_hook(enter_child))
            self._handles.append(child.register_forward_hook(leave_child))

    def _hook(self, module, routes):
        stack, nested = [], [0]
        self._mode_stacks.append(stack)     # a forward that raised never ran `post`: restore() exits its mode

        def pre(mod, inputs):
            mode = _Route(routes, nested)
            mode.__enter__()
            stack.append(mode)

        def post(mod, inputs, output):
            if stack:
                stack.pop().__exit__(None, None, None)

        def enter_child(mod, inputs):
            nested[0] += 1

        def leave_child(mod, inputs, output):
            nested[0] -= 1

        self._handles.append(module.register_forward_pre_hook(pre))
        self._handles.append(module.register_forward_hook(post))
        for child in module.children():
            self._handles.append(child.register_forward_pre_hook(enter_child))
            self._handles.append(child.register_forward_hook(leave_child))

    def restore(self):
        for h in self._handles:
            h.remove()
        self._handles = []
        for stack in getattr(self, "_mode_stacks", ()):
            while stack:
                stack.pop().__exit__(None, None, None)
        self._mode_stacks = []
        for g, name, original in reversed(self._patched):
            g[name] = original
        self._patched = []
        self._marks = None
        self._wrapped_acts = set()
        for k in self.kernels:
            if hasattr(k, "fused_marks"):
                del k.fused_marks
        for k in self.kernels:
            if hasattr(k, "_gate"):
                del k._gate
        for module in self._buffers:
            del module._buffers[FROZEN_WT]
        self._buffers = []
        for module, had, forward in reversed(self._forwards):
            if had:
                module.forward = forward
            else:
                del module.forward
        self._forwards = []

    def report(self):
        return [k.report() for k in self.kernels]

    def reset_counts(self):
        for k in self.kernels:
            k.routed, k.fallbacks = 0, {}


def load_kernel(path, name):
    """Imports a kernel.py under a unique module name; returns (module, KERNEL_TYPE)."""
    import importlib.util
    import sys
    mod_name = "_ak_plug_%s" % "".join(c if c.isalnum() else "_" for c in name)
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module          # Triton's @jit needs the module importable by name
    spec.loader.exec_module(module)
    return module, getattr(module, "KERNEL_TYPE", None)


def op_name(name):
    """The torch.library name of kernel folder `name`: an identifier (folders start with a digit,
    "03-rmsnorm", which the schema parser refuses: "expected ident but found 'number'")."""
    return "autokernel::k_%s" % "".join(c if c.isalnum() else "_" for c in name)


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
        k.call_note = ("custom op %s" % op_name(k.name) if op is not None else why or
                       "op type %s has no fake implementation: a plain Python call" % k.op_type)
    return kernels


# The regions' custom-op rules (the regions section above): (x, residual, weight[, bias]) -> out[2, M, N].
def _region_shape(x, r, w):
    if tuple(r) != tuple(x):
        raise ValueError("residual %s is not x's shape %s" % (list(r), list(x)))
    return (2,) + _same_last(x, w, "weight")


FAKE_SHAPES["add_rmsnorm"] = lambda attrs, x, r, w: _region_shape(x, r, w)
FAKE_SHAPES["add_layernorm"] = lambda attrs, x, r, w, *b: _region_shape(x, r, w)
_ARITY.update({"add_rmsnorm": 3, "add_layernorm": 4})
