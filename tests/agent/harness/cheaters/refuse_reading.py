"""Attack (bending the baseline): talk the judge out of reading outputs from this process. The
judge's first timed call checks that it may read the kernel's process; the kernel rewrites its
runner so that this first held output is described at an address that cannot be read, hoping the
judge falls back to copying outputs inside the clock (where direct_output.py's trick would pay).
A bad address is the kernel's doing, not a refusal of the right to read: reading stays on."""
import sys

import torch

KERNEL_TYPE = "silu"
_st = {"done": False}


def _patch():
    r = sys.modules["harness.runners.runner"]
    orig_hold = r._hold

    def _hold(state, out, *rest):
        desc = orig_hold(state, out, *rest)
        if not _st["done"] and desc.get("held"):
            _st["done"] = True
            desc["ptr"] = 8         # unmapped: process_vm_readv answers EFAULT
        return desc
    r._hold = _hold


def kernel_fn(x):
    f = sys._getframe(1)
    if f.f_locals.get("hold") is True and "_hold" in f.f_globals and not _st["done"]:
        _patch()
    return torch.nn.functional.silu(x)
