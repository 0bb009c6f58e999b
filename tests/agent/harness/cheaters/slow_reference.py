"""Attack (bending the baseline): a profile hook that sleeps whenever torch.softmax is called from
anywhere but this kernel, so the reference looks slow; the kernel itself is honest but slower than
PyTorch."""
import sys
import threading
import time

import torch

KERNEL_TYPE = "softmax"
_inside = [False]


def _hook(frame, event, arg):
    if event == "c_call" and getattr(arg, "__name__", "") == "softmax" and not _inside[0]:
        time.sleep(0.002)


sys.setprofile(_hook)
threading.setprofile(_hook)


def kernel_fn(x):
    _inside[0] = True
    try:
        sys.setprofile(_hook)
        y = torch.exp(x - x.max(dim=-1, keepdim=True).values)
        return y / y.sum(dim=-1, keepdim=True)
    finally:
        _inside[0] = False
