"""Cheater: honest for the first calls (the checks), then returns a cheap wrong answer."""
import torch

KERNEL_TYPE = "softmax"
_calls = [0]


def kernel_fn(x):
    _calls[0] += 1
    if _calls[0] <= 14:
        return torch.softmax(x, dim=-1)
    return torch.full_like(x, 1.0 / x.shape[-1])
