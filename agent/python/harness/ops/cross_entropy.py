"""cross_entropy: mean over the batch of -log softmax(logits)[target]."""

from ..inputs import data
from ..spec import OpSpec, rows_of, tol


def reference(logits, targets):
    import torch.nn.functional as F
    return F.cross_entropy(logits, targets)


def make_inputs(size, dtype, device, gen, dist):
    import torch
    b, v = size["batch"], size["vocab"]
    logits = data((b, v), dtype, device, gen, dist, SPEC)
    targets = torch.randint(0, v, (b,), generator=gen, device=device, dtype=torch.int64)
    targets[0] = 0                      # the first and last class are where off-by-one bugs live
    targets[-1] = v - 1
    return (logits, targets)


def from_shapes(shapes):
    return {"batch": rows_of(shapes[0]), "vocab": shapes[0][-1]}


SPEC = OpSpec(
    name="cross_entropy",
    summary="F.cross_entropy(logits, targets) (mean reduction)",
    args=("logits", "targets"),
    arg_shapes=("logits[batch, vocab]", "targets[batch] int64"),
    output="loss: 0-dim tensor, dtype of logits",
    dims=("batch", "vocab"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: 4.0 * s["batch"] * s["vocab"],
    bytes=lambda s, dt: (float(s["batch"]) * s["vocab"] + s["batch"]) * dt,
    flops_text="4*batch*vocab",
    bytes_text="(batch*vocab + batch) * dt",
    tolerances=tol(1e-5, 1e-2, 2e-2),
    sizes={
        "cuda": [{"batch": 128, "vocab": 1000}, {"batch": 1024, "vocab": 32000},
                 {"batch": 4096, "vocab": 32000}, {"batch": 4096, "vocab": 50257},
                 {"batch": 8192, "vocab": 128256}],
        "cpu": [{"batch": 32, "vocab": 1000}, {"batch": 256, "vocab": 8000},
                {"batch": 256, "vocab": 32000}],
        "quick": [{"batch": 8, "vocab": 100}, {"batch": 32, "vocab": 1000}],
    },
    odd_sizes={
        "cuda": [{"batch": 1023, "vocab": 50257}, {"batch": 3, "vocab": 32001}],
        "cpu": [{"batch": 97, "vocab": 5003}, {"batch": 1, "vocab": 32001}],
        "quick": [{"batch": 7, "vocab": 129}],
    },
    secret_ranges={
        "cuda": {"batch": (3, 3000), "vocab": (3, 70000)},
        "cpu": {"batch": (3, 200), "vocab": (3, 9000)},
        "quick": {"batch": (3, 40), "vocab": (3, 700)},
    },
    headline={"cuda": {"batch": 4096, "vocab": 32000}, "cpu": {"batch": 256, "vocab": 32000},
              "quick": {"batch": 128, "vocab": 4000}},
    from_shapes=from_shapes,
    constraints="any batch, vocab >= 1; targets in [0, vocab); no ignore_index",
)
