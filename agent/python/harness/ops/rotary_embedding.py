"""rotary_embedding: interleaved pairs (x[..., 2i], x[..., 2i+1]) or, layout "neox", the halves
(x[..., i], x[..., i + D/2]) (transformers' rotate_half) rotated by angle[s, i]; cos/sin [S, D/2].

Contract attribute: layout "interleaved" (default) or "neox"."""

from ..contract.inputs import data
from ..contract.spec import OpSpec, Refused, choice, fact_args, fact_name, pick, site_label, tol

ATTRS = {"layout": choice("interleaved", "neox")}


def reference(x, cos, sin):
    import torch
    x0, x1 = x[..., 0::2], x[..., 1::2]
    o0 = x0 * cos - x1 * sin
    o1 = x0 * sin + x1 * cos
    return torch.stack((o0, o1), dim=-1).flatten(-2)


def reference_neox(x, cos, sin):
    import torch
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def _bind(attrs):
    if attrs["layout"] == "interleaved":
        return dict(reference=reference, summary=_INTERLEAVED)
    return dict(reference=reference_neox,
                summary="neox rotary (rotate_half): out[i] = x[i]cos - x[i+D/2]sin, "
                        "out[i+D/2] = x[i+D/2]cos + x[i]sin, i < D/2")


# transformers models whose apply_rotary_pos_emb rotates interleaved pairs (rotate_every_two).
_INTERLEAVED_MODELS = ("gptj", "codegen", "esm", "chameleon")


def site_attrs(fact):
    """One call site's facts -> attrs (docs/contracts.md)."""
    args, name, where = fact_args(fact), fact_name(fact).lower(), site_label(fact)
    probe = fact.get("probe") if isinstance(fact.get("probe"), dict) else {}
    found, layout = pick(args, "layout")
    if not found and probe.get("layout"):
        found, layout = True, probe["layout"]
    if found:
        return {"layout": layout}
    found, inter = pick(args, "interleaved", "is_neox_style")
    if found and isinstance(inter, bool):
        neox = not inter if "interleaved" in args else inter
        return {"layout": "neox" if neox else "interleaved"}
    if "rotate_every_two" in name or any(".%s." % m in name for m in _INTERLEAVED_MODELS):
        return {"layout": "interleaved"}
    if "rotate_half" in name or "apply_rotary_pos_emb" in name:
        return {"layout": "neox"}
    if probe.get("mismatch"):
        raise Refused("%s: the call matches no rotary layout (interleaved or neox): %s"
                      % (where, probe["mismatch"]))
    return {}


def make_inputs(size, dtype, device, gen, dist):
    import torch
    B, H, S, D = size["B"], size["H"], size["S"], size["D"]
    x = data((B, H, S, D), dtype, device, gen, dist, SPEC)
    inv_freq = 10000.0 ** (-torch.arange(0, D, 2, device=device, dtype=torch.float32) / D)
    pos = torch.arange(S, device=device, dtype=torch.float32)
    angle = pos[:, None] * inv_freq[None, :]
    # A random phase per call: cos/sin tables differ between calls, so caching them is wrong.
    angle = angle + torch.rand((1, D // 2), generator=gen, device=device) * 6.2831853
    return (x, torch.cos(angle).to(dtype), torch.sin(angle).to(dtype))


def from_shapes(shapes):
    B, H, S, D = shapes[0][-4:]
    return {"B": B, "H": H, "S": S, "D": D}


_INTERLEAVED = "interleaved rotary: out[2i] = x[2i]cos - x[2i+1]sin, out[2i+1] = x[2i]sin + x[2i+1]cos"

SPEC = OpSpec(
    name="rotary_embedding",
    summary=_INTERLEAVED,
    args=("x", "cos", "sin"),
    arg_shapes=("x[B, H, S, D]", "cos[S, D/2]", "sin[S, D/2]"),
    output="y[B, H, S, D], dtype of x",
    dims=("B", "H", "S", "D"),
    reference=reference,
    make_inputs=make_inputs,
    flops=lambda s: 6.0 * s["B"] * s["H"] * s["S"] * s["D"],
    bytes=lambda s, dt: (2.0 * s["B"] * s["H"] * s["S"] * s["D"] + s["S"] * s["D"]) * dt,
    flops_text="6*B*H*S*D",
    bytes_text="(2*B*H*S*D + S*D) * dt",
    tolerances=tol(1e-5, 1e-3, 2e-3),
    sizes={
        "cuda": [{"B": 1, "H": 4, "S": 128, "D": 64}, {"B": 2, "H": 16, "S": 512, "D": 128},
                 {"B": 2, "H": 32, "S": 1024, "D": 128}, {"B": 4, "H": 32, "S": 2048, "D": 128}],
        "cpu": [{"B": 1, "H": 2, "S": 64, "D": 32}, {"B": 2, "H": 4, "S": 256, "D": 64},
                {"B": 2, "H": 8, "S": 512, "D": 64}],
        "quick": [{"B": 1, "H": 2, "S": 16, "D": 8}, {"B": 2, "H": 2, "S": 64, "D": 32}],
    },
    odd_sizes={
        "cuda": [{"B": 1, "H": 3, "S": 77, "D": 64}, {"B": 2, "H": 5, "S": 1023, "D": 80}],
        "cpu": [{"B": 1, "H": 3, "S": 77, "D": 32}, {"B": 1, "H": 5, "S": 129, "D": 80}],
        "quick": [{"B": 1, "H": 3, "S": 37, "D": 24}],
    },
    secret_ranges={
        "cuda": {"B": (1, 3), "H": (1, 9), "S": (3, 3000), "D": (8, 256)},
        "cpu": {"B": (1, 2), "H": (1, 5), "S": (3, 300), "D": (8, 128)},
        "quick": {"B": (1, 2), "H": (1, 3), "S": (3, 60), "D": (4, 48)},
    },
    headline={"cuda": {"B": 2, "H": 32, "S": 1024, "D": 128},
              "cpu": {"B": 2, "H": 8, "S": 512, "D": 64},
              "quick": {"B": 2, "H": 4, "S": 256, "D": 64}},
    from_shapes=from_shapes,
    even_dims=("D",),
    constraints="any B, H, S >= 1; D even; x contiguous; cos/sin [S, D/2] contiguous",
    attr_defs=ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
