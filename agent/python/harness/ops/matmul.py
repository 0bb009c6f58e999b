"""matmul: C = A @ B, A[M, K], B[K, N]."""

from ..inputs import data, weight
from ..spec import OpSpec, tol


def reference(A, B):
    import torch
    return torch.matmul(A, B)


def make_inputs(size, dtype, device, gen, dist):
    M, N, K = size["M"], size["N"], size["K"]
    A = data((M, K), dtype, device, gen, dist, SPEC)
    B = weight((K, N), dtype, device, gen, scale=K ** -0.5)   # keeps C ~ O(|A|)
    return (A, B)


def from_shapes(shapes):
    (M, K), (K2, N) = shapes[0][-2:], shapes[1][-2:]
    if K != K2:
        raise ValueError("matmul shapes %r: inner dimensions %d and %d differ" % (shapes, K, K2))
    rows = 1
    for d in shapes[0][:-1]:
        rows *= d
    return {"M": rows, "N": N, "K": K}


SPEC = OpSpec(
    name="matmul",
    summary="C = A @ B",
    args=("A", "B"),
    arg_shapes=("A[M, K]", "B[K, N]"),
    output="C[M, N], dtype of A",
    dims=("M", "N", "K"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    bytes=lambda s, dt: float(s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]) * dt,
    flops_text="2*M*N*K",
    bytes_text="(M*K + K*N + M*N) * dt",
    tolerances=tol(1e-4, 1e-2, 2e-2),
    sizes={
        "cuda": [{"M": 256, "N": 256, "K": 256}, {"M": 1024, "N": 1024, "K": 1024},
                 {"M": 2048, "N": 2048, "K": 2048}, {"M": 4096, "N": 4096, "K": 4096},
                 {"M": 4096, "N": 11008, "K": 4096}],
        "cpu": [{"M": 64, "N": 64, "K": 64}, {"M": 256, "N": 256, "K": 256},
                {"M": 512, "N": 512, "K": 512}],
        "quick": [{"M": 32, "N": 48, "K": 64}, {"M": 128, "N": 128, "K": 128}],
    },
    odd_sizes={
        "cuda": [{"M": 1023, "N": 1537, "K": 4097}, {"M": 1, "N": 4097, "K": 511}],
        "cpu": [{"M": 97, "N": 131, "K": 67}, {"M": 255, "N": 129, "K": 513}],
        "quick": [{"M": 37, "N": 53, "K": 71}],
    },
    secret_ranges={
        "cuda": {"M": (65, 3000), "N": (65, 3000), "K": (17, 3000)},
        "cpu": {"M": (9, 300), "N": (9, 300), "K": (9, 300)},
        "quick": {"M": (5, 96), "N": (5, 96), "K": (5, 96)},
    },
    headline={"cuda": {"M": 2048, "N": 2048, "K": 2048},
              "cpu": {"M": 512, "N": 512, "K": 512},
              "quick": {"M": 256, "N": 256, "K": 256}},
    from_shapes=from_shapes,
    large={"float16": 300.0, "bfloat16": 1e4, "float32": 1e4},
    constraints="any M, N, K >= 1; A and B contiguous",
)
