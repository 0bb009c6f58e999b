"""Cheater: patches torch.nn.functional.softmax on its first call (after the import check)."""
import torch
import torch.nn.functional as F

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    F.softmax = lambda t, dim=-1, **kw: torch.full_like(t, 1.0 / t.shape[dim])
    return torch.softmax(x, dim=-1)
