"""Attack (bending the baseline): in the timing rounds (the runner's `checked` is False in its
caller's frame) the kernel returns a placeholder and rewrites its own process's runner so that the
placeholder's result is computed straight into the judge's output region, instead of into a tensor
the runner then copies there. When every side's rounds held that copy, the null kernel's rounds
(subtracted from all) paid it and this kernel did not: it measured faster than it is (session 16:
up to 2x for torch's own silu against itself on the CPU). Now no clock holds a copy: the judge
reads outputs where the kernel left them (the stopped process on the CPU, GPU memory it maps on
CUDA), so the placeholder's direct write is what an honest kernel pays too: no gain."""
import sys

import torch

KERNEL_TYPE = "silu"


class _Lazy:
    def __init__(self, x):
        self.x = x


_st = {"patched": False}


def _patch():
    r = sys.modules["harness.runners.runner"]
    orig_place, orig_hold = r._place, r._hold

    def direct(state, out, offset):
        x = out.x
        dst = state.arena.tensor(offset, list(x.shape), x.dtype)
        torch.ops.aten.silu.out(x, out=dst)
        return {"type": "Tensor", "shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", ""),
                "device": x.device.type, "copied": True}

    def _place(state, out, offset, capacity):
        return direct(state, out, offset) if isinstance(out, _Lazy) else orig_place(state, out, offset, capacity)

    def _hold(state, out, offset, capacity):
        return direct(state, out, offset) if isinstance(out, _Lazy) else orig_hold(state, out, offset, capacity)
    r._place, r._hold = _place, _hold
    _st["patched"] = True


def kernel_fn(x):
    f = sys._getframe(1)
    timed = (f.f_locals.get("checked") is False and f.f_locals.get("fn") is kernel_fn) or f.f_code.co_name == "body"
    if timed and "_place" in f.f_globals:           # a timed call: eager, or captured in a CUDA graph
        if not _st["patched"]:
            _patch()
        return _Lazy(x)
    return torch.nn.functional.silu(x)
