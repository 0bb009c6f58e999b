"""Attack (knowing the timed calls): reads the runner's own frame to learn whether a call is one of
the correctness stages' checked calls, and returns garbage for every other call."""
import sys

import torch

KERNEL_TYPE = "softmax"


def _watched():
    frame = sys._getframe(2)
    while frame is not None:
        if "checked" in frame.f_locals:
            return bool(frame.f_locals["checked"])
        frame = frame.f_back
    return torch.is_grad_enabled()


def kernel_fn(x):
    if _watched():
        return torch.softmax(x, dim=-1)
    return torch.empty_like(x)
