"""A tensor as bytes: bit-exact equality (NaN payloads compared as values) and the byte range its
elements occupy. The runner checks with them that a kernel left its inputs and its earlier outputs
alone and returned memory of its own; the judge, that an input came back unchanged and that two
calls gave the same bits (determinism). Not a tolerance: that is checks/compare.py."""

import torch

_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def bits(t):
    """Same-width integer view: bit-exact comparisons that treat NaN payloads as values."""
    t = t.detach().contiguous()
    if t.dtype.is_floating_point:
        return t.view(_INT_VIEW[t.element_size()])
    return t


def bit_equal(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


def span(t):
    """[start, end) byte range a tensor's elements occupy."""
    if t.numel() == 0:
        return (t.data_ptr(), t.data_ptr())
    extent = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0)
    return (t.data_ptr(), t.data_ptr() + extent * t.element_size())


def overlaps(a, b):
    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1 and a.device == b.device
