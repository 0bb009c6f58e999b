"""Module-level plugs: the module *is* the op (nn.Linear, an RMSNorm class, a SwiGLU MLP, a rotary module
holding cos/sin tables): its forward is replaced for this instance; whether a norm module computes
what the kernel's contract says is normcheck.py's."""


import torch

from . import swap
from .kernel import FROZEN_WT, MLP_NAMES, RMSNORM_EPS, _fits, _rows, _same  # noqa: F401 (plug.FROZEN_WT)
from .fused import ACTIVATION_FAMILY
from .normcheck import EPS_ATTRS, layernorm_mismatch, module_eps, rmsnorm_mismatch  # noqa: F401 (plug.*)

# --- module-level plugs -------------------------------------------------------------------------


def _module_forward(kernel, module):
    """A replacement forward for `module`, or a string saying why the module cannot take the kernel."""
    op = kernel.op_type
    if op == "matmul" and ACTIVATION_FAMILY.get(kernel.attrs.get("activation", "none"), "none") == "none" \
            and kernel.attrs.get("activation", "none") != "none":
        return "activation %r: the plug knows gelu, gelu_tanh, silu, relu" % kernel.attrs.get("activation")
    if op == "matmul":
        if not isinstance(module, torch.nn.Linear):
            return None                     # a functional matmul: routed by the mode instead
        return swap.linear_forward(kernel)
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
        return swap.rmsnorm_forward(kernel, type(module).forward)
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
    if op in swap.SWAPPED_FUNCTION_OPS:
        return swap.module_forward(kernel, module)     # None: the function-level route instead
    return None
