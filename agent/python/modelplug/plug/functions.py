"""Function-level adapters: a torch function called inside a call-site module (F.softmax, F.layer_norm,
F.scaled_dot_product_attention, F.linear, torch.matmul, ...) routed to its kernel while that module's own
code runs (a TorchFunctionMode entered by the site's hooks, plugged.py). Each adapter takes (kernel, args,
kwargs) and returns the output, or None after counting why the call falls back to PyTorch."""

import math

import torch

from .fused import _skip_activation
from .kernel import TorchFunctionMode, LAYERNORM_EPS, _compiling, _fits, _in_kernel, _rows, _same  # noqa: F401

# --- function-level adapters: (kernel, args, kwargs) -> output, or None to fall back -------------

def _rowwise(k, x, *params):
    """k on x's rows [M, N] (a 2-d contiguous x as it is: no reshape, no view back), output in x's shape."""
    if x.dim() == 2 and x.is_contiguous():
        return k.run(x, *params)
    return k.run(_rows(x).contiguous(), *params).view(x.shape)


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
    return _rowwise(k, x)


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
        return _rowwise(k, x, w, b)
    return _rowwise(k, x, w)


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
    return k.fallback(why) if why else _rowwise(k, x)


def _silu(k, args, kwargs):
    x = args[0]
    if kwargs.get("inplace") or (len(args) > 1 and args[1]):
        return k.fallback("in-place silu")
    why = _fits(k, x)
    return k.fallback(why) if why else _rowwise(k, x)


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


def _linear_misfit(k, x, w, b):
    """Why a linear call does not fit the matmul kernel's contract, or None. Depends on the tensors'
    dtypes, the bias's presence and the plug's fixed state only (swap.py asks once per signature)."""
    why = _fits(k, x, w) or ("a bias of another dtype" if b is not None and b.dtype != x.dtype else None)
    if why:
        return why
    with_bias = bool(k.attrs.get("bias", False))
    if with_bias and b is None:
        return "linear without a bias, the kernel adds one"
    if not with_bias and b is not None and k.contracted:
        return "linear with a bias, the kernel has none"
    act = k.attrs.get("activation", "none")
    if act != "none" and getattr(k, "fused_marks", None) is None:
        return "the kernel applies %s, and no plug takes the model's own %s out" % (act, act)
    return None


def _linear_call(k, x, w, b, wt=None):
    why = _linear_misfit(k, x, w, b)
    if why:
        return k.fallback(why)
    with_bias = bool(k.attrs.get("bias", False))
    act = k.attrs.get("activation", "none")
    marks = getattr(k, "fused_marks", None)
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


def _addmm(k, args, kwargs):
    """torch.addmm(bias, a, b): GPT-2's Conv1D (its weight is already [K, N]: no transpose). The
    contract's bias goes to the kernel's epilogue; only a bias row [N] ([1, N]) with alpha = beta = 1."""
    names = ("input", "mat1", "mat2")
    a = dict(zip(names, args))
    a.update(kwargs)
    bias, x, w = a.get("input"), a.get("mat1"), a.get("mat2")
    if a.get("out") is not None:
        return k.fallback("addmm into out=")
    if a.get("alpha", 1) != 1 or a.get("beta", 1) != 1:
        return k.fallback("addmm with alpha or beta other than 1")
    why = _fits(k, bias, x, w)
    if why:
        return k.fallback(why)
    if x.dim() != 2 or w.dim() != 2 or bias.dim() not in (1, 2) or bias.shape[-1] != w.shape[1] or \
            bias.numel() != w.shape[1]:
        return k.fallback("addmm's addend is not a bias row [N]")    # a scalar, a column, a full [M, N]
    if not k.attrs.get("bias", False):
        return k.fallback("addmm adds a bias, the kernel has none")
    if k.attrs.get("activation", "none") != "none":
        return k.fallback("the kernel applies %s after an addmm, which has none" % k.attrs["activation"])
    return k.run(x.contiguous(), w.contiguous(), bias.reshape(-1).contiguous())


def _matmul(k, args, kwargs):
    name = kwargs.pop("__name", "")
    if name == "linear":
        x, w = args[0], args[1]
        b = args[2] if len(args) > 2 else kwargs.get("bias")
        return _linear_call(k, x, w, b)
    if name == "addmm":
        if k.callable and not k.callable.endswith("addmm"):
            # The folder is a Linear's (or a matmul's): an addmm at its site is another folder's call,
            # not a fallback of this one (before addmm was routed, it was never seen here).
            return _other(k, "a torch.addmm call (another folder's)")
        return _addmm(k, args, kwargs)
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
            # Every torch call (and tensor attribute read) in the site's code passes here: the common
            # case, a function no kernel takes or a child module's call, returns after two lookups.
            # Only the call site's own calls are routed: a child module's (its Linear, say) are another site.
            if not self.nested[0]:
                ks = self.routes.get(getattr(func, "__name__", ""))
                if ks and not _in_kernel():
                    kwargs = kwargs or {}
                    for k in ks:
                        extra = {"__name": func.__name__} if k.op_type in ("matmul", "_skip_activation") else {}
                        out = ADAPTERS[k.op_type](k, args, dict(kwargs, **extra))
                        if out is not None:
                            return out
            return func(*args, **(kwargs or {}))
