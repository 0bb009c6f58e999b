"""reduce: sum over the last dimension of x[M, N]."""

from ..contract.inputs import data
from ..contract.spec import OpSpec, rows_of, tol


def reference(x):
    import torch
    return torch.sum(x, dim=-1)


def make_inputs(size, dtype, device, gen, dist):
    return (data((size["M"], size["N"]), dtype, device, gen, dist, SPEC),)


def from_shapes(shapes):
    return {"M": rows_of(shapes[0]), "N": shapes[0][-1]}


SPEC = OpSpec(
    name="reduce",
    summary="torch.sum(x, dim=-1)",
    args=("x",),
    arg_shapes=("x[M, N]",),
    output="y[M], dtype of x",
    dims=("M", "N"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: float(s["M"]) * s["N"],
    bytes=lambda s, dt: (float(s["M"]) * s["N"] + s["M"]) * dt,
    flops_text="M*N",
    bytes_text="(M*N + M) * dt",
    tolerances=tol(1e-4, 1e-2, 1e-1, bf16_rtol=5e-2),
    sizes={
        "cuda": [{"M": 128, "N": 512}, {"M": 1024, "N": 4096}, {"M": 4096, "N": 4096},
                 {"M": 8192, "N": 8192}],
        "cpu": [{"M": 64, "N": 256}, {"M": 512, "N": 1024}, {"M": 2048, "N": 2048}],
        "quick": [{"M": 8, "N": 64}, {"M": 64, "N": 1000}],
    },
    odd_sizes={
        "cuda": [{"M": 1023, "N": 1537}, {"M": 1, "N": 4097}, {"M": 4097, "N": 1}],
        "cpu": [{"M": 97, "N": 1537}, {"M": 1, "N": 4097}, {"M": 257, "N": 1}],
        "quick": [{"M": 7, "N": 129}, {"M": 5, "N": 1}],
    },
    secret_ranges={
        "cuda": {"M": (3, 5000), "N": (3, 20000)},
        "cpu": {"M": (3, 300), "N": (3, 3000)},
        "quick": {"M": (3, 40), "N": (3, 500)},
    },
    headline={"cuda": {"M": 8192, "N": 8192}, "cpu": {"M": 2048, "N": 2048},
              "quick": {"M": 512, "N": 1024}},
    from_shapes=from_shapes,
    constraints="any M, N >= 1",
    # A sum of N values of scale s has scale s*sqrt(N): fp16 "large" stays where row sums fit.
    large={"float16": 10.0, "bfloat16": 1e4, "float32": 1e4},
)
