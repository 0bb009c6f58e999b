"""CPU starter: gelu over CHUNK elements at a time, computed in fp32: the tanh approximation, or exact
(0.5 x (1 + erf(x / sqrt(2)))) when CONTRACT's approximate is "none".

Tunables: CHUNK elements per step (cache blocking), NUM_THREADS intra-op threads (0 = PyTorch's
default).
"""

import contextlib
import math

import torch

KERNEL_TYPE = "gelu"

CHUNK = 65536
NUM_THREADS = 0

TUNE_SPACE = {"CHUNK": [4096, 16384, 65536, 262144, 1048576], "NUM_THREADS": [0, 1, 2, 4]}

_C = math.sqrt(2.0 / math.pi)
# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"approximate": "tanh"}, **globals().get("CONTRACT", {}))
_EXACT = _ATTRS["approximate"] == "none"


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
            if _EXACT:
                inner = torch.erf(c * 0.7071067811865476)
            else:
                inner = torch.tanh(_C * (c + 0.044715 * c * c * c))
            out[i0:i0 + CHUNK].copy_(0.5 * c * (1.0 + inner))
    return out.view(x.shape)
