"""layernorm over the last dimension: (x - mean) / sqrt(var + 1e-5) * weight + bias."""

from ..inputs import data, weight
from ..spec import OpSpec, rows_of, tol

EPS = 1e-5


def reference(x, weight, bias):
    import torch.nn.functional as F
    return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def make_inputs(size, dtype, device, gen, dist):
    b, d = size["batch"], size["dim"]
    x = data((b, d), dtype, device, gen, dist, SPEC)
    return (x, weight((d,), dtype, device, gen, 0.1, 1.0), weight((d,), dtype, device, gen, 0.1))


def from_shapes(shapes):
    return {"batch": rows_of(shapes[0]), "dim": shapes[0][-1]}


SPEC = OpSpec(
    name="layernorm",
    summary="F.layer_norm(x, (dim,), weight, bias, eps=1e-5)",
    args=("x", "weight", "bias"),
    arg_shapes=("x[batch, dim]", "weight[dim]", "bias[dim]"),
    output="y[batch, dim], dtype of x",
    dims=("batch", "dim"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: 8.0 * s["batch"] * s["dim"],
    bytes=lambda s, dt: (2.0 * s["batch"] * s["dim"] + 2.0 * s["dim"]) * dt,
    flops_text="8*batch*dim",
    bytes_text="(2*batch*dim + 2*dim) * dt",
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
    constraints="any batch, dim >= 1; eps fixed at 1e-5",
    # Zero-variance rows are ill-conditioned: 1/sqrt(eps) = 316 amplifies the last-bit rounding
    # of any fp32 mean. The case exists to catch a missing eps (inf/NaN), not last bits.
    hostile_atol_scale={"equal_rows": 100.0},
)
