"""Cheater: returns one preallocated buffer per shape, overwriting what it returned before."""
import torch

KERNEL_TYPE = "softmax"
_buffers = {}


def kernel_fn(x):
    key = (tuple(x.shape), x.dtype, x.device)
    if key not in _buffers:
        _buffers[key] = torch.empty_like(x)
    out = _buffers[key]
    out.copy_(torch.softmax(x, dim=-1))
    return out
