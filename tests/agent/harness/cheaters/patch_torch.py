"""Cheater: replaces torch.softmax at import so the reference agrees with (or is slower than) it."""
import torch

KERNEL_TYPE = "softmax"

_original = torch.softmax


def _fake_softmax(x, dim=-1, **kwargs):
    return torch.full_like(x, 1.0 / x.shape[dim])


torch.softmax = _fake_softmax


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
