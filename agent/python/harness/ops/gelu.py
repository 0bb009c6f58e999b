"""gelu, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

from ..inputs import data
from ..spec import OpSpec, rows_of, tol


def reference(x):
    import torch.nn.functional as F
    return F.gelu(x, approximate="tanh")


def make_inputs(size, dtype, device, gen, dist):
    return (data((size["M"], size["N"]), dtype, device, gen, dist, SPEC),)


def from_shapes(shapes):
    return {"M": rows_of(shapes[0]), "N": shapes[0][-1]}


def elementwise_spec(name, summary, ref, inputs, shapes, flops_per_element, module_doc):
    return OpSpec(
        name=name,
        summary=summary,
        args=("x",),
        arg_shapes=("x[M, N]",),
        output="y[M, N], dtype of x",
        dims=("M", "N"),
        reference=ref,
        make_inputs=inputs,
        flops=lambda s: float(flops_per_element) * s["M"] * s["N"],
        bytes=lambda s, dt: 2.0 * s["M"] * s["N"] * dt,
        flops_text="%d*M*N" % flops_per_element,
        bytes_text="2*M*N * dt",
        tolerances=tol(1e-5, 1e-3, 2e-3),
        sizes={
            "cuda": [{"M": 128, "N": 512}, {"M": 1024, "N": 4096}, {"M": 4096, "N": 4096},
                     {"M": 8192, "N": 8192}],
            "cpu": [{"M": 64, "N": 256}, {"M": 512, "N": 1024}, {"M": 2048, "N": 2048}],
            "quick": [{"M": 8, "N": 64}, {"M": 64, "N": 1000}],
        },
        odd_sizes={
            "cuda": [{"M": 1023, "N": 1537}, {"M": 1, "N": 4097}, {"M": 3, "N": 5}],
            "cpu": [{"M": 97, "N": 1537}, {"M": 1, "N": 4097}],
            "quick": [{"M": 7, "N": 129}],
        },
        secret_ranges={
            "cuda": {"M": (1, 5000), "N": (1, 20000)},
            "cpu": {"M": (1, 300), "N": (1, 3000)},
            "quick": {"M": (1, 40), "N": (1, 500)},
        },
        headline={"cuda": {"M": 8192, "N": 8192}, "cpu": {"M": 2048, "N": 2048},
                  "quick": {"M": 512, "N": 1024}},
        from_shapes=shapes,
        constraints="any M, N >= 1 (the harness passes 2-D x; models' [B, T, D] are flattened)",
    )


SPEC = elementwise_spec("gelu", 'F.gelu(x, approximate="tanh")', reference, make_inputs,
                        from_shapes, 9, __doc__)
