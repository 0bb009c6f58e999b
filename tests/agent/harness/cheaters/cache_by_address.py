"""Cheater: caches outputs by input address; the timing loop reuses the same buffers."""
import torch

KERNEL_TYPE = "softmax"
_cache = {}


def kernel_fn(x):
    key = (x.data_ptr(), tuple(x.shape), x.dtype)
    if key not in _cache:
        _cache[key] = torch.softmax(x, dim=-1)
    return _cache[key].clone()
