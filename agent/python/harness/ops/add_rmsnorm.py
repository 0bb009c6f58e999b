"""add_rmsnorm, a region of two ops (#40): the residual add and the rmsnorm that reads its sum.

    h = x + residual                       (the model's new residual stream, dtype of x)
    y = h * rsqrt(mean(h^2) + eps) * (offset + weight)

kernel_fn returns ONE tensor out[2, M, N]: out[0] = h, out[1] = y (the harness judges one output; the
plug hands the model views of both). One pass reads x and residual once and writes h and y, instead
of the add's write of h and the norm's read of it again. The norm is computed from h rounded to the
output dtype, as the model's eager norm sees it. Contract attributes: those of rmsnorm (eps, offset).
"""

from ..contract.inputs import data, weight
from ..contract.spec import Magnitudes, OpSpec, Refused, acc, eps_tiny, rows_of, site_label
from . import rmsnorm


def _bind(attrs):
    eps, offset = attrs["eps"], attrs["offset"]
    mag = Magnitudes(tiny=eps_tiny(eps))

    def reference(x, residual, weight):
        import torch
        h = x + residual
        hf = acc(h)
        y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)
        w = acc(weight)
        return torch.stack((h, (y * (w + offset if offset else w)).to(x.dtype)))

    def make_inputs(size, dtype, device, gen, dist):
        M, N = size["M"], size["N"]
        return (data((M, N), dtype, device, gen, dist, mag), data((M, N), dtype, device, gen, dist, mag),
                weight((N,), dtype, device, gen, 0.1, 1.0 - offset))

    scale = "(%g + weight)" % offset if offset else "weight"
    return dict(
        reference=reference, make_inputs=make_inputs, tiny=mag.tiny,
        summary="h = x + residual; y = h * rsqrt(mean(h^2, -1) + %g) * %s (fp32); returns stack((h, y))"
                % (eps, scale),
        flops=(lambda s: (8.0 if offset else 7.0) * s["M"] * s["N"]),
        flops_text="8*M*N" if offset else "7*M*N",
        constraints="any M, N >= 1; eps %g, weight offset %g (the contract's); out[0] = x + residual, "
                    "out[1] = its rmsnorm, one [2, M, N] tensor" % (eps, offset))


def norm_facts(fact):
    """The norm's own call facts inside a region's facts (akregions: {"kind": "region", "norm": ...})."""
    norm = fact.get("norm")
    return norm if isinstance(norm, dict) else fact


def check_add(fact):
    add = fact.get("add") if isinstance(fact.get("add"), dict) else {}
    shapes = [t.get("shape") for t in add.get("tensors") or () if isinstance(t, dict)]
    if len(shapes) == 2 and shapes[0] != shapes[1]:
        raise Refused("%s: the residual add broadcasts %s + %s: not supported (equal shapes only)"
                      % (site_label(fact), shapes[0], shapes[1]))


def site_attrs(fact):
    check_add(fact)
    return rmsnorm.site_attrs(norm_facts(fact))


def from_shapes(shapes):
    return {"M": rows_of(shapes[0]), "N": shapes[0][-1]}


SPEC = OpSpec(
    name="add_rmsnorm",
    summary="",
    args=("x", "residual", "weight"),
    arg_shapes=("x[M, N]", "residual[M, N]", "weight[N]"),
    output="out[2, M, N], dtype of x: out[0] = x + residual, out[1] = rmsnorm(out[0])",
    dims=("M", "N"),
    reference=None,
    make_inputs=None,
    flops=None,
    bytes=lambda s, dt: (4.0 * s["M"] * s["N"] + s["N"]) * dt,
    flops_text="",
    bytes_text="(4*M*N + N) * dt",
    tolerances=rmsnorm.SPEC.tolerances,
    sizes=rmsnorm.SPEC.sizes,
    odd_sizes=rmsnorm.SPEC.odd_sizes,
    secret_ranges=rmsnorm.SPEC.secret_ranges,
    headline=rmsnorm.SPEC.headline,
    from_shapes=from_shapes,
    attr_defs=rmsnorm.ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
