"""CPU starter: rotary embedding, ROW_CHUNK (batch*head) slices at a time; CONTRACT's layout:
"interleaved" pairs (2i, 2i+1) (default) or "neox" halves (i, i + D/2), cos/sin [S, D/2] either way.

Tunables: ROW_CHUNK [S, D] slices per step, NUM_THREADS intra-op threads (0 = PyTorch's default).
"""

import contextlib

import torch

KERNEL_TYPE = "rotary_embedding"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"layout": "interleaved"}, **globals().get("CONTRACT", {}))
_NEOX = _ATTRS["layout"] == "neox"

ROW_CHUNK = 8
NUM_THREADS = 0

TUNE_SPACE = {"ROW_CHUNK": [1, 2, 4, 8, 16, 32, 64], "NUM_THREADS": [0, 1, 2, 4]}


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


def _neox(x, cos, sin):
    B, H, S, D = x.shape
    h = D // 2
    flat = x.reshape(B * H, S, D)
    out = torch.empty_like(x)
    out_flat = out.view(B * H, S, D)
    c, s = cos.float(), sin.float()
    with _threads(NUM_THREADS):
        for r0 in range(0, B * H, ROW_CHUNK):
            blk = flat[r0:r0 + ROW_CHUNK].float()
            x1, x2 = blk[..., :h], blk[..., h:]
            o = out_flat[r0:r0 + ROW_CHUNK]
            o[..., :h].copy_(x1 * c - x2 * s)
            o[..., h:].copy_(x2 * c + x1 * s)
    return out


def kernel_fn(x, cos, sin):
    if _NEOX:
        return _neox(x, cos, sin)
    B, H, S, D = x.shape
    flat = x.reshape(B * H, S, D // 2, 2)
    out = torch.empty_like(x)
    out_flat = out.view(B * H, S, D // 2, 2)
    c, s = cos.float(), sin.float()
    with _threads(NUM_THREADS):
        for r0 in range(0, B * H, ROW_CHUNK):
            blk = flat[r0:r0 + ROW_CHUNK].float()
            x0, x1 = blk[..., 0], blk[..., 1]
            o = out_flat[r0:r0 + ROW_CHUNK]
            o[..., 0].copy_(x0 * c - x1 * s)
            o[..., 1].copy_(x0 * s + x1 * c)
    return out
