"""CPU starter: silu x * sigmoid(x) over CHUNK elements at a time, computed in fp32.

Tunables: CHUNK elements per step (cache blocking), NUM_THREADS intra-op threads (0 = PyTorch's
default).
"""

import contextlib

import torch

KERNEL_TYPE = "silu"

CHUNK = 65536
NUM_THREADS = 0

TUNE_SPACE = {"CHUNK": [4096, 16384, 65536, 262144, 1048576], "NUM_THREADS": [0, 1, 2, 4]}


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
    flat = x.reshape(-1)
    out = torch.empty_like(flat)
    with _threads(NUM_THREADS):
        for i0 in range(0, flat.numel(), CHUNK):
            c = flat[i0:i0 + CHUNK].float()
            out[i0:i0 + CHUNK].copy_(c * torch.sigmoid(c))
    return out.view(x.shape)
