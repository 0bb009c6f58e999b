"""add_layernorm, a region of two ops (#40): the residual add and the layernorm that reads its sum.

    h = x + residual                       (the model's new residual stream, dtype of x)
    y = (h - mean(h)) * rsqrt(var(h) + eps) * weight (+ bias)

kernel_fn(x, residual, weight[, bias]) returns ONE tensor out[2, M, N]: out[0] = h, out[1] = y (see
add_rmsnorm). Contract attributes: those of layernorm (eps, bias).
"""

import math

from ..contract.inputs import data, weight
from ..contract.spec import Magnitudes, OpSpec, acc, eps_tiny
from . import add_rmsnorm, layernorm


def _bind(attrs):
    eps, has_bias = attrs["eps"], attrs["bias"]
    mag = Magnitudes(tiny=eps_tiny(eps))

    def reference(x, residual, weight, bias=None):
        import torch
        import torch.nn.functional as F
        h = x + residual
        hf = acc(h)
        y = F.layer_norm(hf, (h.shape[-1],), acc(weight), acc(bias) if bias is not None else None, eps)
        return torch.stack((h, y.to(x.dtype)))

    def make_inputs(size, dtype, device, gen, dist):
        M, N = size["M"], size["N"]
        x = data((M, N), dtype, device, gen, dist, mag)
        r = data((M, N), dtype, device, gen, dist, mag)
        w = weight((N,), dtype, device, gen, 0.1, 1.0)
        return (x, r, w, weight((N,), dtype, device, gen, 0.1)) if has_bias else (x, r, w)

    return dict(
        reference=reference, make_inputs=make_inputs, tiny=mag.tiny,
        summary="h = x + residual; y = F.layer_norm(h, (N,), weight, %s, eps=%g) (fp32); returns stack((h, y))"
                % ("bias" if has_bias else "None", eps),
        args=("x", "residual", "weight", "bias") if has_bias else ("x", "residual", "weight"),
        arg_shapes=("x[M, N]", "residual[M, N]", "weight[N]") + (("bias[N]",) if has_bias else ()),
        flops=lambda s: (10.0 if has_bias else 9.0) * s["M"] * s["N"],
        flops_text="10*M*N" if has_bias else "9*M*N",
        bytes=lambda s, dt: (4.0 * s["M"] * s["N"] + (2.0 if has_bias else 1.0) * s["N"]) * dt,
        bytes_text="(4*M*N + %sN) * dt" % ("2*" if has_bias else ""),
        constraints="any M, N >= 1; eps %g%s (the contract's); out[0] = x + residual, out[1] = its "
                    "layernorm, one [2, M, N] tensor" % (eps, "" if has_bias else ", no bias"),
        hostile_atol_scale={"equal_rows": 100.0 * max(1.0, math.sqrt(1e-5 / eps))})


def site_attrs(fact):
    add_rmsnorm.check_add(fact)
    return layernorm.site_attrs(add_rmsnorm.norm_facts(fact))


SPEC = OpSpec(
    name="add_layernorm",
    summary="",
    args=("x", "residual", "weight", "bias"),
    arg_shapes=("x[M, N]", "residual[M, N]", "weight[N]", "bias[N]"),
    output="out[2, M, N], dtype of x: out[0] = x + residual, out[1] = layernorm(out[0])",
    dims=("M", "N"),
    reference=None,
    make_inputs=None,
    flops=None,
    bytes=None,
    flops_text="",
    bytes_text="",
    tolerances=layernorm.SPEC.tolerances,
    sizes={k: [{"M": s["batch"], "N": s["dim"]} for s in v] for k, v in layernorm.SPEC.sizes.items()},
    odd_sizes={k: [{"M": s["batch"], "N": s["dim"]} for s in v] for k, v in layernorm.SPEC.odd_sizes.items()},
    secret_ranges={k: {"M": v["batch"], "N": v["dim"]} for k, v in layernorm.SPEC.secret_ranges.items()},
    headline={k: {"M": v["batch"], "N": v["dim"]} for k, v in layernorm.SPEC.headline.items()},
    from_shapes=add_rmsnorm.from_shapes,
    attr_defs=layernorm.ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
