"""Cheater: computes once, then returns the first result forever."""
import torch

KERNEL_TYPE = "softmax"
_first = []


def kernel_fn(x):
    if not _first:
        _first.append(torch.softmax(x, dim=-1))
    return _first[0]
