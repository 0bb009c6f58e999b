"""softmax over the last dimension of x[rows, cols]."""

from ..contract.inputs import data
from ..contract.spec import OpSpec, Refused, fact_args, fact_tensor, pick, rows_of, site_label, tol


def site_attrs(fact):
    """No attributes: over the last dimension only; other dims are refused."""
    args = fact_args(fact)
    found, dim = pick(args, "dim", "axis")
    if not found or dim is None or dim == -1:
        return {}
    x = fact_tensor(fact, "input", "x", "self") or {}
    ndim = len(x.get("shape") or ())
    if isinstance(dim, int) and ndim and dim == ndim - 1:
        return {}
    raise Refused("%s: softmax over dim %r%s: not supported (the last dimension only)"
                  % (site_label(fact), dim, " of %d" % ndim if ndim else ""))


def reference(x):
    import torch
    return torch.softmax(x, dim=-1)


def make_inputs(size, dtype, device, gen, dist):
    return (data((size["rows"], size["cols"]), dtype, device, gen, dist, SPEC),)


def from_shapes(shapes):
    return {"rows": rows_of(shapes[0]), "cols": shapes[0][-1]}


SPEC = OpSpec(
    name="softmax",
    summary="softmax(x, dim=-1)",
    args=("x",),
    arg_shapes=("x[rows, cols]",),
    output="y[rows, cols], dtype of x",
    dims=("rows", "cols"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: 5.0 * s["rows"] * s["cols"],
    bytes=lambda s, dt: 2.0 * s["rows"] * s["cols"] * dt,
    flops_text="5*rows*cols",
    bytes_text="2*rows*cols * dt",
    tolerances=tol(1e-5, 1e-3, 2e-3),
    sizes={
        "cuda": [{"rows": 128, "cols": 512}, {"rows": 1024, "cols": 1024},
                 {"rows": 4096, "cols": 4096}, {"rows": 4096, "cols": 50257},
                 {"rows": 8192, "cols": 8192}],
        "cpu": [{"rows": 64, "cols": 256}, {"rows": 512, "cols": 1024}, {"rows": 1024, "cols": 4096}],
        "quick": [{"rows": 8, "cols": 64}, {"rows": 64, "cols": 1000}],
    },
    odd_sizes={
        "cuda": [{"rows": 1023, "cols": 1537}, {"rows": 7, "cols": 4097}, {"rows": 1, "cols": 50257}],
        "cpu": [{"rows": 97, "cols": 1537}, {"rows": 1, "cols": 4097}],
        "quick": [{"rows": 7, "cols": 129}],
    },
    secret_ranges={
        "cuda": {"rows": (3, 5000), "cols": (3, 20000)},
        "cpu": {"rows": (3, 300), "cols": (3, 3000)},
        "quick": {"rows": (3, 40), "cols": (3, 500)},
    },
    headline={"cuda": {"rows": 4096, "cols": 4096}, "cpu": {"rows": 1024, "cols": 4096},
              "quick": {"rows": 256, "cols": 1024}},
    from_shapes=from_shapes,
    sites=site_attrs,
    constraints="any rows, cols >= 1; x contiguous",
)
