"""The thin per-call path (#38, #40): a module forward swapped in at plug time, whose per-call work is
one lookup of the input's signature and the kernel's launch.

A plugged call used to pay a hook, a route and every contract check on every call (13 us of host time
on the CI CPU, 50-84 us on the H100 host, where ViT's kernels run ~37 us). Everything that cannot
change between calls is decided once:

- at plug time, from the module's fixed attributes (nn.LayerNorm's eps, bias and normalized_shape,
  nn.GELU's approximate, nn.Softmax's dim, nn.SiLU's inplace): the route. A module whose attributes do
  not fit the contract is not swapped; it keeps the function-level route, which falls back per call
  with the reason, as before;
- once per input signature (shape, stride, dtype of the input and of the module's parameters): the
  contract's dtype and shape checks, how the input becomes the kernel's rows [M, N] (as it is, a
  view, or a contiguous copy) and the output's shape. The answer is kept in a dict per module: a
  repeated call does one lookup. A signature that does not fit falls back to the module's own code
  and is counted with its reason every time, so "every site routed, no fallback" stays true to what ran.

Under torch.compile (and for anything but a plain tensor input) the swapped forward takes the
general path (functions.py's adapters), which Dynamo traces without id()-keyed caches.
"""

import torch
import torch.nn.functional as F

from .functions import _gelu, _layer_norm, _linear_call, _linear_misfit, _silu, _softmax, _weights
from .kernel import FROZEN_WT, _compiling, _fits, _in_kernel, _state, launch
from .normcheck import layernorm_mismatch

_Tensor = torch.Tensor
AS_IS, VIEW, COPY = 0, 1, 2      # how an input becomes the kernel's rows [M, N]


def rows_of(x, n):
    """(prep, rows shape, output shape) for an input whose last dim is n: a 2-D contiguous input goes
    as it is; any other contiguous one as a view [M, n]; a strided one as a contiguous copy."""
    if x.dim() == 2 and x.is_contiguous():
        return AS_IS, None, None
    m = x.numel() // n if n else 0
    return (VIEW if x.is_contiguous() else COPY), (m, n), tuple(x.shape)


MAX_SIGNATURES = 1024          # per module: a model fed ever new shapes (decoding lengths) starts over


def _bound(sigs):
    if len(sigs) >= MAX_SIGNATURES:
        sigs.clear()


def as_rows(x, prep, rows):
    if prep == AS_IS:
        return x
    if prep == VIEW:
        return x.view(rows)
    return x.reshape(rows).contiguous()


def linear_forward(kernel):
    """nn.Linear's forward for a matmul kernel. Per signature (input, weight and bias dtypes and the
    input's shape and strides): the contract's checks (_linear_misfit) and the rows; per call: W^T from
    the weight cache (made once per weight version), the launch, the output's view."""
    act = kernel.attrs.get("activation", "none")
    add_bias_after = not kernel.attrs.get("bias", False) and not kernel.contracted
    sigs = {}
    held = [(None, -1, None)]          # this module's entry of the shared W^T cache

    def general(self, x):
        wt = getattr(self, FROZEN_WT, None)     # a frozen plug (a compiled copy): W^T as a buffer, made once
        out = _linear_call(kernel, x, self.weight, self.bias, wt) if not _in_kernel() else None
        return out if out is not None else F.linear(x, self.weight, self.bias)   # a fallback

    def linear(self, x):
        if type(x) is not _Tensor or _compiling():
            return general(self, x)
        params = self._parameters               # not self.weight: nn.Module.__getattr__ costs per call
        w, b = params["weight"], params.get("bias")
        key = (x.shape, x.is_contiguous(), x.dtype, w.dtype, None if b is None else b.dtype)
        sig = sigs.get(key)
        if sig is None:
            why = _linear_misfit(kernel, x, w, b)
            _bound(sigs)
            sig = sigs[key] = (why,) + ((None, None, None) if why else rows_of(x, x.shape[-1]))
        why, prep, rows, shape = sig
        if why is not None:
            kernel.fallback(why)
            return F.linear(x, w, b)
        depth = getattr(_state, "depth", 0)
        if depth:
            return F.linear(x, w, b)           # inside another kernel: PyTorch's own, as before
        wt = self._buffers.get(FROZEN_WT)
        if wt is None:
            entry = held[0]
            if entry[0] is not w or entry[1] != w._version:
                _weights.get(w)
                entry = held[0] = _weights.cache[id(w)]
            wt = entry[2]
        a = x if prep == AS_IS else as_rows(x, prep, rows)
        _state.depth = 1                        # launch(), inlined: this is the hottest path
        try:
            y = kernel.call(a, wt, b) if b is not None and not add_bias_after else kernel.call(a, wt)
        finally:
            _state.depth = 0
        kernel.routed += 1
        if b is not None and add_bias_after:
            y = y + b           # a kernel without CONTRACT: the bias added after, as before contracts
        if shape is not None:
            y = y.view(shape[:-1] + (w.shape[0],))
        if act != "none":
            kernel.fused_marks.mark(y, kernel)  # the model's own activation of exactly y returns it as is
        return y
    return linear


def _rows_forward(kernel, fits, general, params):
    """A forward for a module computing f(x) row-wise with its own parameters (params(the module's
    _parameters): the tensors after x in the kernel's call). fits(self, x) -> None or the reason, asked
    once per signature."""
    sigs = {}

    def forward(self, x):
        if type(x) is not _Tensor or _compiling():
            return general(self, x)
        ps = params(self._parameters)
        key = (x.shape, x.is_contiguous(), x.dtype) + tuple(p.dtype for p in ps)
        sig = sigs.get(key)
        if sig is None:
            why = fits(self, x)
            _bound(sigs)
            sig = sigs[key] = (why,) + ((None, None, None) if why else rows_of(x, x.shape[-1]))
        why, prep, rows, shape = sig
        if why is not None or getattr(_state, "depth", 0):
            if why is not None:
                kernel.fallback(why)
            return general.original(self, x)
        y = launch(kernel, x if prep == AS_IS else as_rows(x, prep, rows), *ps)
        return y if shape is None else y.view(shape)
    return forward


def _general(kernel, adapter, args_of, original):
    """The general path of a swapped module: its function's adapter (checks every call, counts), else
    the module's own forward."""
    def general(self, x):
        out = adapter(kernel, args_of(self, x), {}) if isinstance(x, _Tensor) and not _in_kernel() else None
        return out if out is not None else original(self, x)
    general.original = original
    return general


SWAPPED_FUNCTION_OPS = ("layernorm", "gelu", "silu", "softmax")


def module_forward(kernel, module):
    """A swapped forward for a stock norm or activation module whose fixed attributes fit the kernel's
    contract (nn.LayerNorm, nn.GELU, nn.SiLU, nn.Softmax), or None: the site keeps its function-level
    route (which then falls back per call with the reason)."""
    op, cls = kernel.op_type, type(module)
    if "forward" in vars(module):
        return None                     # another plug already holds this module's forward
    if op == "layernorm" and cls.forward is torch.nn.LayerNorm.forward:
        return _layernorm(kernel, module)
    if op == "gelu" and cls.forward is torch.nn.GELU.forward:
        if getattr(module, "approximate", "none") != kernel.attrs.get("approximate", "tanh"):
            return None
        return _rows_forward(kernel, lambda self, x: _fits(kernel, x),
                             _general(kernel, _gelu, lambda self, x: (x, self.approximate), cls.forward),
                             lambda p: ())
    if op == "silu" and cls.forward is torch.nn.SiLU.forward and not module.inplace:
        return _rows_forward(kernel, lambda self, x: _fits(kernel, x),
                             _general(kernel, _silu, lambda self, x: (x,), cls.forward), lambda p: ())
    if op == "softmax" and cls.forward is torch.nn.Softmax.forward and module.dim is not None:
        def fits(self, x):
            if self.dim not in (-1, x.dim() - 1):
                return "softmax over a dimension other than the last"
            return _fits(kernel, x)
        return _rows_forward(kernel, fits, _general(kernel, _softmax, lambda self, x: (x, self.dim), cls.forward),
                             lambda p: ())
    return None


def _layernorm(kernel, module):
    with_bias = bool(kernel.attrs.get("bias", True))
    if layernorm_mismatch(module, float(kernel.attrs.get("eps", 1e-5)), with_bias):
        return None                     # eps, bias or shape differ: the function route says why, per call

    def fits(self, x):
        ps = (self.weight, self.bias) if with_bias else (self.weight,)
        why = _fits(kernel, x, *ps)
        if why is None and x.shape[-1] != self.weight.shape[0]:
            why = "normalized over more than the last dimension"
        return why
    args_of = (lambda self, x: (x, self.normalized_shape, self.weight, self.bias, self.eps))
    params = (lambda p: (p["weight"], p["bias"])) if with_bias else (lambda p: (p["weight"],))
    return _rows_forward(kernel, fits, _general(kernel, _layer_norm, args_of, torch.nn.LayerNorm.forward), params)


def rmsnorm_forward(kernel, original):
    """An RMSNorm-like module's forward (checked at plug time, modules.py): per signature the dtype and
    hidden-size checks; per call the launch."""
    def fits(self, x):
        why = _fits(kernel, x)
        return why or (None if x.shape[-1] == self.weight.shape[0] else "hidden size differs")

    def general(self, x):
        why = fits(self, x) if isinstance(x, _Tensor) else "an argument is not a tensor"
        if why:
            kernel.fallback(why)
            return original(self, x)
        return kernel.run(x.reshape(-1, x.shape[-1]).contiguous(), self.weight).view(x.shape)
    general.original = original
    return _rows_forward(kernel, fits, general, lambda p: (p["weight"],))
