"""layernorm over the last dimension: (x - mean) / sqrt(var + eps) * weight (+ bias).

Contract attributes: eps (default 1e-5), bias true/false (kernel_fn(x, weight) when false)."""

import math

from ..contract.inputs import data, weight
from ..contract.spec import (Magnitudes, OpSpec, Refused, choice, eps_tiny, fact_args, fact_param, fact_tensor,
                             pick, positive_float, rows_of, site_label, tol)

EPS = 1e-5
ATTRS = {"eps": positive_float(EPS), "bias": choice(True, False)}


def _bind(attrs):
    eps, has_bias = attrs["eps"], attrs["bias"]
    mag = Magnitudes(tiny=eps_tiny(eps))

    if has_bias:
        def reference(x, weight, bias):
            import torch.nn.functional as F
            return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
    else:
        def reference(x, weight):
            import torch.nn.functional as F
            return F.layer_norm(x, (x.shape[-1],), weight, None, eps)

    def make_inputs(size, dtype, device, gen, dist):
        b, d = size["batch"], size["dim"]
        x = data((b, d), dtype, device, gen, dist, mag)
        w = weight((d,), dtype, device, gen, 0.1, 1.0)
        return (x, w, weight((d,), dtype, device, gen, 0.1)) if has_bias else (x, w)

    return dict(
        reference=reference, make_inputs=make_inputs, tiny=mag.tiny,
        summary="F.layer_norm(x, (dim,), weight, %s, eps=%g)" % ("bias" if has_bias else "None", eps),
        args=("x", "weight", "bias") if has_bias else ("x", "weight"),
        arg_shapes=("x[batch, dim]", "weight[dim]", "bias[dim]") if has_bias else ("x[batch, dim]", "weight[dim]"),
        flops=(lambda s: 8.0 * s["batch"] * s["dim"]) if has_bias else (lambda s: 7.0 * s["batch"] * s["dim"]),
        flops_text="8*batch*dim" if has_bias else "7*batch*dim",
        bytes=(lambda s, dt: (2.0 * s["batch"] * s["dim"] + (2.0 if has_bias else 1.0) * s["dim"]) * dt),
        bytes_text="(2*batch*dim + %sdim) * dt" % ("2*" if has_bias else ""),
        constraints="any batch, dim >= 1; eps %g%s (the contract's)" % (eps, "" if has_bias else ", no bias"),
        # Zero-variance rows are ill-conditioned: 1/sqrt(eps) (316 at 1e-5) amplifies the last-bit
        # rounding of any fp32 mean. The case exists to catch a missing eps (inf/NaN), not last bits.
        hostile_atol_scale={"equal_rows": 100.0 * max(1.0, math.sqrt(1e-5 / eps))})


def site_attrs(fact):
    """One call site's facts -> attrs (docs/contracts.md); Refused for what is not supported."""
    args, out, where = fact_args(fact), {}, site_label(fact)
    probe = fact.get("probe") if isinstance(fact.get("probe"), dict) else {}
    if probe.get("mismatch"):
        raise Refused("%s: the module's output matches no layernorm formula: %s" % (where, probe["mismatch"]))
    found, shape = pick(args, "normalized_shape")
    if found and isinstance(shape, (list, tuple)) and len(shape) > 1:
        raise Refused("%s: layernorm over the last %d dimensions: not supported (the last one only)"
                      % (where, len(shape)))
    has_w, w = fact_param(fact, "weight")
    w_arg = pick(args, "weight")
    if (has_w and w is None) or pick(args, "elementwise_affine")[1] is False \
            or (w_arg[0] and w_arg[1] is None and fact_tensor(fact, "weight") is None):
        raise Refused("%s: layernorm without a weight (elementwise_affine=False): not supported" % where)
    found, eps = pick(args, "eps", "variance_epsilon", "epsilon")
    if eps is None and probe.get("eps") is not None:
        eps = probe["eps"]
    if eps is not None:
        out["eps"] = eps
    elif found:
        raise Refused("%s: layernorm with eps None: not supported" % where)
    has_b, b = fact_param(fact, "bias")
    b_arg = pick(args, "bias")
    tensors = [t.get("arg") for t in fact.get("tensors") or () if isinstance(t, dict)]
    if fact_tensor(fact, "bias") is not None or (has_b and b is not None):
        out["bias"] = True
    elif (has_b and b is None) or (b_arg[0] and b_arg[1] in (None, False)):
        out["bias"] = False
    elif "weight" in tensors and fact.get("kind") == "function":
        out["bias"] = False            # its tensors were recorded: a bias would be among them
    return out


def from_shapes(shapes):
    return {"batch": rows_of(shapes[0]), "dim": shapes[0][-1]}


SPEC = OpSpec(
    name="layernorm",
    summary="",
    args=("x", "weight", "bias"),
    arg_shapes=("x[batch, dim]", "weight[dim]", "bias[dim]"),
    output="y[batch, dim], dtype of x",
    dims=("batch", "dim"),
    reference=None,
    make_inputs=None,
    flops=None,
    bytes=None,
    flops_text="",
    bytes_text="",
    tolerances=tol(1e-5, 1e-3, 2e-3),
    sizes={
        "cuda": [{"batch": 128, "dim": 512}, {"batch": 1024, "dim": 1024},
                 {"batch": 4096, "dim": 2048}, {"batch": 4096, "dim": 8192},
                 {"batch": 8192, "dim": 8192}],
        "cpu": [{"batch": 64, "dim": 256}, {"batch": 512, "dim": 1024}, {"batch": 1024, "dim": 2048}],
        "quick": [{"batch": 8, "dim": 64}, {"batch": 64, "dim": 384}],
    },
    odd_sizes={
        "cuda": [{"batch": 1023, "dim": 1537}, {"batch": 5, "dim": 4097}],
        "cpu": [{"batch": 97, "dim": 1537}, {"batch": 1, "dim": 4097}],
        "quick": [{"batch": 7, "dim": 129}],
    },
    secret_ranges={
        "cuda": {"batch": (3, 5000), "dim": (3, 12000)},
        "cpu": {"batch": (3, 300), "dim": (3, 3000)},
        "quick": {"batch": (3, 40), "dim": (3, 500)},
    },
    headline={"cuda": {"batch": 4096, "dim": 2048}, "cpu": {"batch": 1024, "dim": 2048},
              "quick": {"batch": 256, "dim": 1024}},
    from_shapes=from_shapes,
    attr_defs=ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
