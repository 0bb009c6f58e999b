"""Attack (bending the clock): caches results by data pointer plus a fingerprint of a few elements,
so repeated timed calls on unchanged buffers cost a lookup; buffers refilled with fresh data miss."""
import torch

KERNEL_TYPE = "softmax"
_cache = {}


def kernel_fn(x):
    flat = x.reshape(-1)
    key = (x.data_ptr(), tuple(x.shape), x.dtype, tuple(flat[:4].tolist()), tuple(flat[-4:].tolist()))
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = torch.softmax(x, dim=-1)
    return hit.clone()
