"""fused_mlp (SwiGLU): down(silu(x W_gate^T) * (x W_up^T))."""

from ..contract.inputs import data, weight
from ..contract.spec import OpSpec, Refused, fact_tensor, rows_of, site_label, tol


def reference(x, w_gate, w_up, w_down):
    import torch.nn.functional as F
    return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)


def make_inputs(size, dtype, device, gen, dist):
    b, d, h = size["batch"], size["dim"], size["hidden"]
    x = data((b, d), dtype, device, gen, dist, SPEC)
    w_gate = weight((h, d), dtype, device, gen, d ** -0.5)
    w_up = weight((h, d), dtype, device, gen, d ** -0.5)
    w_down = weight((d, h), dtype, device, gen, h ** -0.5)
    return (x, w_gate, w_up, w_down)


def site_attrs(fact):
    """A gated-MLP region's facts (akregions.py: the gate/up/down linears' facts) -> {} or Refused: the
    contract is SiLU-gated projections without biases."""
    if fact.get("kind") != "region":
        return {}
    where = site_label(fact)
    act = fact.get("activation") or (fact.get("gate") or {}).get("activation")
    if act != "silu":
        raise Refused("%s: gated MLP with activation %r: not supported (SiLU only)" % (where, act))
    for part in ("gate", "up", "down"):
        f = fact.get(part) or {}
        if fact_tensor(f, "bias") is not None:
            raise Refused("%s: the MLP's %s projection has a bias: not supported (none)" % (where, part))
    return {}


def from_shapes(shapes):
    return {"batch": rows_of(shapes[0]), "dim": shapes[0][-1], "hidden": shapes[1][0]}


SPEC = OpSpec(
    name="fused_mlp",
    summary="SwiGLU MLP: F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)",
    args=("x", "w_gate", "w_up", "w_down"),
    arg_shapes=("x[batch, dim]", "w_gate[hidden, dim]", "w_up[hidden, dim]", "w_down[dim, hidden]"),
    output="y[batch, dim], dtype of x",
    dims=("batch", "dim", "hidden"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: 6.0 * s["batch"] * s["dim"] * s["hidden"],
    bytes=lambda s, dt: (2.0 * s["batch"] * s["dim"] + 3.0 * s["hidden"] * s["dim"]) * dt,
    flops_text="6*batch*dim*hidden",
    bytes_text="(2*batch*dim + 3*hidden*dim) * dt",
    tolerances=tol(1e-4, 1e-2, 2e-2),
    sizes={
        "cuda": [{"batch": 128, "dim": 256, "hidden": 512}, {"batch": 512, "dim": 1024, "hidden": 2816},
                 {"batch": 2048, "dim": 2048, "hidden": 5504},
                 {"batch": 4096, "dim": 4096, "hidden": 11008}],
        "cpu": [{"batch": 32, "dim": 64, "hidden": 128}, {"batch": 128, "dim": 256, "hidden": 688},
                {"batch": 256, "dim": 512, "hidden": 1376}],
        "quick": [{"batch": 8, "dim": 32, "hidden": 48}, {"batch": 32, "dim": 64, "hidden": 176}],
    },
    odd_sizes={
        "cuda": [{"batch": 1023, "dim": 513, "hidden": 1377}, {"batch": 77, "dim": 1000, "hidden": 2731}],
        "cpu": [{"batch": 77, "dim": 100, "hidden": 273}, {"batch": 1, "dim": 129, "hidden": 257}],
        "quick": [{"batch": 7, "dim": 33, "hidden": 45}],
    },
    secret_ranges={
        "cuda": {"batch": (17, 2000), "dim": (17, 1500), "hidden": (17, 3000)},
        "cpu": {"batch": (3, 100), "dim": (3, 200), "hidden": (3, 300)},
        "quick": {"batch": (3, 30), "dim": (3, 50), "hidden": (3, 70)},
    },
    headline={"cuda": {"batch": 2048, "dim": 2048, "hidden": 5504},
              "cpu": {"batch": 256, "dim": 512, "hidden": 1376},
              "quick": {"batch": 64, "dim": 256, "hidden": 688}},
    from_shapes=from_shapes,
    large={"float16": 10.0, "bfloat16": 100.0, "float32": 100.0},
    constraints="any batch, dim, hidden >= 1; all tensors contiguous",
    sites=site_attrs,
)
