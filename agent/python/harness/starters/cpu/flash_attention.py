"""CPU starter: attention, BLOCK_Q query rows at a time. Causal (CONTRACT's default): each block
only multiplies the keys it can see (the causal half is skipped, not masked after the fact); not
causal: every key. Scale from CONTRACT (null = 1/sqrt(D)).

Tunables: BLOCK_Q query rows per step, NUM_THREADS intra-op threads (0 = PyTorch's default).
"""

import contextlib
import math

import torch

KERNEL_TYPE = "flash_attention"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"causal": True, "scale": None}, **globals().get("CONTRACT", {}))
_CAUSAL = bool(_ATTRS["causal"])
_SCALE = _ATTRS["scale"]

BLOCK_Q = 128
NUM_THREADS = 0

TUNE_SPACE = {"BLOCK_Q": [16, 32, 64, 128, 256, 512], "NUM_THREADS": [0, 1, 2, 4]}


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


def kernel_fn(Q, K, V):
    S, D = Q.shape[-2], Q.shape[-1]
    scale = 1.0 / math.sqrt(D) if _SCALE is None else float(_SCALE)
    out = torch.empty_like(Q)
    q_all, k_all, v_all = Q.float(), K.float(), V.float()
    with _threads(NUM_THREADS):
        for q0 in range(0, S, BLOCK_Q):
            q1 = min(S, q0 + BLOCK_Q)
            kv = q1 if _CAUSAL else S
            scores = torch.matmul(q_all[..., q0:q1, :], k_all[..., :kv, :].transpose(-1, -2))
            scores.mul_(scale)
            if _CAUSAL:
                # Row q (absolute index q0 + i) may see keys 0..q0+i.
                rows = torch.arange(q0, q1).unsqueeze(1)
                cols = torch.arange(0, q1).unsqueeze(0)
                scores.masked_fill_(cols > rows, float("-inf"))
            probs = torch.softmax(scores, dim=-1)
            out[..., q0:q1, :].copy_(torch.matmul(probs, v_all[..., :kv, :]))
    return out
