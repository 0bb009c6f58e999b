"""CPU starter: sum over the last dimension, ROW_CHUNK rows at a time, accumulated in fp32.

Tunables: ROW_CHUNK rows per step, NUM_THREADS intra-op threads (0 = PyTorch's default).
"""

import contextlib

import torch

KERNEL_TYPE = "reduce"

ROW_CHUNK = 256
NUM_THREADS = 0

TUNE_SPACE = {"ROW_CHUNK": [16, 64, 128, 256, 512, 1024, 4096], "NUM_THREADS": [0, 1, 2, 4]}


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


def kernel_fn(x):
    rows = x.shape[0]
    acc = torch.float32
    out = torch.empty((rows,), dtype=x.dtype)
    with _threads(NUM_THREADS):
        for r0 in range(0, rows, ROW_CHUNK):
            out[r0:r0 + ROW_CHUNK].copy_(x[r0:r0 + ROW_CHUNK].sum(dim=-1, dtype=acc))
    return out
