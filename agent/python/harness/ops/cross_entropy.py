"""cross_entropy: mean over the batch of -log softmax(logits)[target]."""

from ..contract.inputs import data
from ..contract.spec import OpSpec, Refused, fact_args, fact_tensor, pick, rows_of, site_label, tol


def site_attrs(fact):
    """No attributes: mean reduction, ignore_index -100; everything else is refused with its reason."""
    args, where = fact_args(fact), site_label(fact)
    found, red = pick(args, "reduction")
    if found and red not in (None, "mean"):
        raise Refused("%s: cross_entropy with reduction %r: not supported (mean only)" % (where, red))
    found, w = pick(args, "weight")
    if fact_tensor(fact, "weight") is not None or (found and w is not None):
        raise Refused("%s: cross_entropy with class weights: not supported" % where)
    found, ls = pick(args, "label_smoothing")
    if found and ls not in (None, 0, 0.0):
        raise Refused("%s: cross_entropy with label_smoothing %r: not supported (0 only)" % (where, ls))
    found, ii = pick(args, "ignore_index")
    if found and ii not in (None, -100):
        raise Refused("%s: cross_entropy with ignore_index %r: not supported (-100 only)" % (where, ii))
    return {}


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
    sites=site_attrs,
    constraints="any batch, vocab >= 1; targets in [0, vocab); no ignore_index",
)
