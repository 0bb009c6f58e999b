"""rmsnorm over the last dimension: x / sqrt(mean(x^2) + eps) * (offset + weight).

Contract attributes: eps (default 1e-6), offset 0.0 or 1.0 (Gemma's `x_hat * (1 + w)`)."""

from ..contract.inputs import data, weight
from ..contract.spec import (Magnitudes, OpSpec, Refused, acc, choice, eps_tiny, fact_args, fact_name, fact_param,
                             fact_tensor, pick, positive_float, rows_of, site_label, tol)

EPS = 1e-6
ATTRS = {"eps": positive_float(EPS), "offset": choice(0.0, 1.0)}
_DTYPE_EPS = {"float32": 1.1920928955078125e-07, "bfloat16": 0.0078125, "float16": 0.0009765625}


def _bind(attrs):
    eps, offset = attrs["eps"], attrs["offset"]
    mag = Magnitudes(tiny=eps_tiny(eps))

    def reference(x, weight):
        # The eager expression models write (what the profiler finds), computed in fp32.
        import torch
        xf = acc(x)
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        w = acc(weight)
        return (y * (w + offset if offset else w)).to(x.dtype)

    def make_inputs(size, dtype, device, gen, dist):
        # Effective scale (offset + w) near 1 either way: Gemma's weights sit near 0.
        M, N = size["M"], size["N"]
        return (data((M, N), dtype, device, gen, dist, mag),
                weight((N,), dtype, device, gen, 0.1, 1.0 - offset))

    scale = "(%g + weight)" % offset if offset else "weight"
    return dict(
        reference=reference, make_inputs=make_inputs, tiny=mag.tiny,
        summary="x * rsqrt(mean(x^2, -1) + %g) * %s (computed in fp32)" % (eps, scale),
        flops=(lambda s: 7.0 * s["M"] * s["N"]) if offset else (lambda s: 6.0 * s["M"] * s["N"]),
        flops_text="7*M*N" if offset else "6*M*N",
        constraints="any M, N >= 1; eps %g, weight offset %g (the contract's)" % (eps, offset))


def site_attrs(fact):
    """One call site's facts -> attrs (docs/contracts.md); Refused for what is not supported."""
    args, out = fact_args(fact), {}
    probe = fact.get("probe") if isinstance(fact.get("probe"), dict) else {}
    if probe.get("mismatch"):
        raise Refused("%s: the module's output matches no rmsnorm formula x * rsqrt(mean(x^2) + eps) * "
                      "(offset + weight): %s" % (site_label(fact), probe["mismatch"]))
    has_w, w = fact_param(fact, "weight")
    w_arg = pick(args, "weight")
    if (has_w and w is None) or (w_arg[0] and w_arg[1] is None and fact_tensor(fact, "weight") is None):
        raise Refused("%s: rmsnorm without a weight: not supported" % site_label(fact))
    found, eps = pick(args, "eps", "variance_epsilon", "epsilon")
    if found and eps is None and "rms_norm" in fact_name(fact):
        # F.rms_norm(eps=None) uses the input dtype's machine epsilon.
        x = fact_tensor(fact, "input", "x", "hidden_states") or {}
        eps = _DTYPE_EPS.get(str(x.get("dtype", "")).replace("torch.", ""))
        if eps is None:
            raise Refused("%s: rmsnorm with eps=None and no recorded input dtype" % site_label(fact))
    if eps is None and probe.get("eps") is not None:
        eps = probe["eps"]
    if eps is not None:
        out["eps"] = eps
    if probe.get("offset") is not None:
        out["offset"] = probe["offset"]
    elif pick(args, "offset")[0]:
        out["offset"] = args["offset"]
    if "offset" in out and out["offset"] not in (0, 1):
        raise Refused("%s: rmsnorm with weight offset %r: not supported (0.0 or 1.0)"
                      % (site_label(fact), out["offset"]))
    return out


def from_shapes(shapes):
    return {"M": rows_of(shapes[0]), "N": shapes[0][-1]}


SPEC = OpSpec(
    name="rmsnorm",
    summary="",
    args=("x", "weight"),
    arg_shapes=("x[M, N]", "weight[N]"),
    output="y[M, N], dtype of x",
    dims=("M", "N"),
    reference=None,
    make_inputs=None,
    flops=None,
    bytes=lambda s, dt: (2.0 * s["M"] * s["N"] + s["N"]) * dt,
    flops_text="",
    bytes_text="(2*M*N + N) * dt",
    tolerances=tol(1e-5, 1e-2, 1e-1, bf16_rtol=5e-2),
    sizes={
        "cuda": [{"M": 128, "N": 512}, {"M": 1024, "N": 1024}, {"M": 4096, "N": 4096},
                 {"M": 8192, "N": 8192}],
        "cpu": [{"M": 64, "N": 256}, {"M": 512, "N": 1024}, {"M": 1024, "N": 4096}],
        "quick": [{"M": 8, "N": 64}, {"M": 64, "N": 1000}],
    },
    odd_sizes={
        "cuda": [{"M": 1023, "N": 1537}, {"M": 5, "N": 4097}],
        "cpu": [{"M": 97, "N": 1537}, {"M": 1, "N": 4097}],
        "quick": [{"M": 7, "N": 129}],
    },
    secret_ranges={
        "cuda": {"M": (3, 5000), "N": (3, 12000)},
        "cpu": {"M": (3, 300), "N": (3, 3000)},
        "quick": {"M": (3, 40), "N": (3, 500)},
    },
    headline={"cuda": {"M": 4096, "N": 4096}, "cpu": {"M": 1024, "N": 4096},
              "quick": {"M": 256, "N": 1024}},
    from_shapes=from_shapes,
    attr_defs=ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
