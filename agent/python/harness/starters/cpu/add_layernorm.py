"""CPU starter: the residual add and the layernorm of its sum in one pass over ROW_CHUNK rows at a time
(h = x + residual; y = layer_norm(h) * weight (+ bias)), eps and bias (present or not: kernel_fn(x,
residual, weight) without one) from CONTRACT. Returns out[2, M, N]: out[0] = h, out[1] = y. The norm
reads h as rounded to the output dtype, as the model's own norm would.

Tunables: ROW_CHUNK rows per step, NUM_THREADS intra-op threads (0 = PyTorch's default).
"""

import contextlib

import torch

KERNEL_TYPE = "add_layernorm"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"eps": 1e-5, "bias": True}, **globals().get("CONTRACT", {}))
_EPS = float(_ATTRS["eps"])
ROW_CHUNK = 64
NUM_THREADS = 0

TUNE_SPACE = {"ROW_CHUNK": [1, 8, 16, 32, 64, 128, 256, 1024], "NUM_THREADS": [0, 1, 2, 4]}


@contextlib.contextmanager
def _threads(n):
    """Run with n intra-op threads (0 = leave PyTorch's setting), restoring the old count."""
    old = torch.get_num_threads()
    if n and n != old:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if n and n != old:
            torch.set_num_threads(old)


def kernel_fn(x, residual, weight, bias=None):
    rows = x.shape[0]
    out = torch.empty((2,) + tuple(x.shape), dtype=x.dtype)
    h_all, y_all = out[0], out[1]
    w = weight.float()
    b = bias.float() if bias is not None else None
    with _threads(NUM_THREADS):
        for r0 in range(0, rows, ROW_CHUNK):
            h = h_all[r0:r0 + ROW_CHUNK]
            torch.add(x[r0:r0 + ROW_CHUNK], residual[r0:r0 + ROW_CHUNK], out=h)
            c = h.float()
            c = c - c.mean(dim=-1, keepdim=True)
            var = (c * c).mean(dim=-1, keepdim=True)
            c.mul_(torch.rsqrt(var + _EPS)).mul_(w)
            if b is not None:
                c.add_(b)
            y_all[r0:r0 + ROW_CHUNK].copy_(c)
    return out
