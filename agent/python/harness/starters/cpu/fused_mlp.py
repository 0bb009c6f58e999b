"""CPU starter: SwiGLU MLP, ROW_CHUNK tokens at a time so the [tokens, hidden] intermediate stays
in cache.

Tunables: ROW_CHUNK tokens per step, NUM_THREADS intra-op threads (0 = PyTorch's default).
Half types are computed in fp32.
"""

import contextlib

import torch

KERNEL_TYPE = "fused_mlp"

ROW_CHUNK = 128
NUM_THREADS = 0

TUNE_SPACE = {"ROW_CHUNK": [16, 32, 64, 128, 256, 512, 1024], "NUM_THREADS": [0, 1, 2, 4]}


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


def kernel_fn(x, w_gate, w_up, w_down):
    rows = x.shape[0]
    out = torch.empty((rows, w_down.shape[0]), dtype=x.dtype)
    wg, wu, wd = w_gate.float().t(), w_up.float().t(), w_down.float().t()
    with _threads(NUM_THREADS):
        for r0 in range(0, rows, ROW_CHUNK):
            c = x[r0:r0 + ROW_CHUNK].float()
            g = torch.mm(c, wg)
            h = torch.nn.functional.silu(g).mul_(torch.mm(c, wu))
            out[r0:r0 + ROW_CHUNK].copy_(torch.mm(h, wd))
    return out
