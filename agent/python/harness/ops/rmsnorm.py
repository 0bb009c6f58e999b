"""rmsnorm over the last dimension: x / sqrt(mean(x^2) + 1e-6) * weight."""

from ..inputs import data, weight
from ..spec import OpSpec, acc, rows_of, tol

EPS = 1e-6


def reference(x, weight):
    # The eager expression models write (what the profiler finds), computed in fp32.
    import torch
    xf = acc(x)
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    return (y * acc(weight)).to(x.dtype)


def make_inputs(size, dtype, device, gen, dist):
    M, N = size["M"], size["N"]
    return (data((M, N), dtype, device, gen, dist, SPEC), weight((N,), dtype, device, gen, 0.1, 1.0))


def from_shapes(shapes):
    return {"M": rows_of(shapes[0]), "N": shapes[0][-1]}


SPEC = OpSpec(
    name="rmsnorm",
    summary="x * rsqrt(mean(x^2, -1) + 1e-6) * weight (computed in fp32)",
    args=("x", "weight"),
    arg_shapes=("x[M, N]", "weight[N]"),
    output="y[M, N], dtype of x",
    dims=("M", "N"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: 6.0 * s["M"] * s["N"],
    bytes=lambda s, dt: (2.0 * s["M"] * s["N"] + s["N"]) * dt,
    flops_text="6*M*N",
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
    constraints="any M, N >= 1; eps fixed at 1e-6",
)
