"""Cheater: correct only for power-of-two widths (the published test sizes), a uniform guess
elsewhere."""
import torch

KERNEL_TYPE = "softmax"
_KNOWN = {64, 1000, 1024, 4096, 256}


def kernel_fn(x):
    if x.shape[-1] in _KNOWN:
        return torch.softmax(x, dim=-1)
    return torch.full_like(x, 1.0 / x.shape[-1])
