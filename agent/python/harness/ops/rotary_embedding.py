"""rotary_embedding with interleaved pairs (x[..., 2i], x[..., 2i+1]) rotated by angle[s, i]."""

from ..inputs import data
from ..spec import OpSpec, tol


def reference(x, cos, sin):
    import torch
    x0, x1 = x[..., 0::2], x[..., 1::2]
    o0 = x0 * cos - x1 * sin
    o1 = x0 * sin + x1 * cos
    return torch.stack((o0, o1), dim=-1).flatten(-2)


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


SPEC = OpSpec(
    name="rotary_embedding",
    summary="interleaved rotary: out[2i] = x[2i]cos - x[2i+1]sin, out[2i+1] = x[2i]sin + x[2i+1]cos",
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
)
