"""Random inputs: several distributions, fresh per call, never constant zeros.

All generation happens in float32 on the target device from a torch.Generator seeded by the
harness's secret RNG, then is cast to the test dtype.
"""

import math

from .dtypes import dtype_name

REGULAR = ("normal", "uniform")
HOSTILE = ("large", "tiny", "mixed", "equal_rows")


def generator(device, seed):
    import torch
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed) & 0x7FFFFFFFFFFFFFFF)
    return gen


def data(shape, dtype, device, gen, dist="normal", spec=None):
    """A tensor of `shape` drawn from `dist`. Rows = every dim but the last."""
    import torch
    shape = tuple(int(s) for s in shape)
    name = dtype_name(dtype)
    large = spec.large.get(name, 1e4) if spec is not None else 1e4
    tiny = spec.tiny.get(name, 1e-6) if spec is not None else 1e-6
    f32 = torch.float32
    if dist == "normal":
        t = torch.randn(shape, generator=gen, device=device, dtype=f32)
    elif dist == "uniform":
        # (-1, 1) without values that round to zero: shift magnitudes into [0.05, 1).
        u = torch.rand(shape, generator=gen, device=device, dtype=f32)
        sign = torch.randint(0, 2, shape, generator=gen, device=device).to(f32) * 2 - 1
        t = sign * (0.05 + 0.95 * u)
    elif dist == "large":
        t = torch.randn(shape, generator=gen, device=device, dtype=f32) * large
    elif dist == "tiny":
        t = torch.randn(shape, generator=gen, device=device, dtype=f32) * tiny
    elif dist == "mixed":
        # Each row its own scale between 1e-3 and `large`: exposes kernels that assume O(1) data.
        row_shape = shape[:-1] + (1,)
        lo, hi = -3.0, math.log10(large)
        exps = lo + (hi - lo) * torch.rand(row_shape, generator=gen, device=device, dtype=f32)
        t = torch.randn(shape, generator=gen, device=device, dtype=f32) * torch.pow(10.0, exps)
    elif dist == "equal_rows":
        # Every element of a row identical and non-zero: zero variance, uniform softmax.
        row_shape = shape[:-1] + (1,)
        v = torch.randn(row_shape, generator=gen, device=device, dtype=f32)
        v = v + torch.sign(v) * 0.25 + (v == 0).to(f32)
        t = v.expand(shape).contiguous()
    else:
        raise ValueError("unknown distribution %r" % dist)
    return t.to(dtype)


def weight(shape, dtype, device, gen, scale=1.0, offset=0.0):
    """Parameters: normal * scale + offset (norm weights near 1, projections ~1/sqrt(fan_in))."""
    import torch
    t = torch.randn(tuple(int(s) for s in shape), generator=gen, device=device, dtype=torch.float32)
    return (t * scale + offset).to(dtype)
