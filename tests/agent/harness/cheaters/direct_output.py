"""Attack (bending the baseline): in the timing rounds (the runner's `checked` is False in its
caller's frame) the kernel returns a placeholder and rewrites its own process's runner so that the
placeholder's result is computed straight into the judge's output region, instead of into a tensor
the runner then copies there. When every side's rounds held that copy, the null kernel's rounds
(subtracted from all) paid it and this kernel did not: it measured faster than it is (session 16:
up to 2x for torch's own silu against itself on the CPU). Now no clock holds a copy: the judge
reads the outputs from the stopped process, and a placeholder is not a tensor."""
import sys

import torch

KERNEL_TYPE = "silu"


class _Lazy:
    def __init__(self, x):
        self.x = x


_st = {"patched": False}


def _patch():
    r = sys.modules["harness.runner"]
    orig_place = r._place

    def _place(state, out, offset, capacity):
        if isinstance(out, _Lazy):
            x = out.x
            dst = state.arena.tensor(offset, list(x.shape), x.dtype)
            torch.ops.aten.silu.out(x, out=dst)
            return {"type": "Tensor", "shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", ""),
                    "device": x.device.type, "copied": True}
        return orig_place(state, out, offset, capacity)
    r._place = _place
    _st["patched"] = True


def kernel_fn(x):
    f = sys._getframe(1)
    if f.f_locals.get("checked") is False and f.f_locals.get("fn") is kernel_fn and "_place" in f.f_globals:
        if not _st["patched"]:
            _patch()
        if f.f_locals.get("hold") is not True:
            return _Lazy(x)
    return torch.nn.functional.silu(x)
