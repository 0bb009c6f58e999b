"""CPU starter: cross-entropy (mean), ROW_CHUNK rows at a time: log-sum-exp minus the target's
logit, accumulated in fp64 so the order of chunks does not change the result's bits.

Tunables: ROW_CHUNK rows per step, NUM_THREADS intra-op threads (0 = PyTorch's default).
"""

import contextlib

import torch

KERNEL_TYPE = "cross_entropy"

ROW_CHUNK = 32
NUM_THREADS = 0

TUNE_SPACE = {"ROW_CHUNK": [1, 4, 8, 16, 32, 64, 128, 512], "NUM_THREADS": [0, 1, 2, 4]}


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


def kernel_fn(logits, targets):
    rows = logits.shape[0]
    total = torch.zeros((), dtype=torch.float64)
    with _threads(NUM_THREADS):
        for r0 in range(0, rows, ROW_CHUNK):
            c = logits[r0:r0 + ROW_CHUNK].float()
            t = targets[r0:r0 + ROW_CHUNK]
            lse = torch.logsumexp(c, dim=-1)
            picked = c.gather(1, t.unsqueeze(1)).squeeze(1)
            total += (lse - picked).double().sum()
    return (total / rows).to(logits.dtype)
