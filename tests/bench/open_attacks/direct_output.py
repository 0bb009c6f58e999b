"""Open attack (bending the baseline; not yet defended, see docs/harness.md "Not defended"): in
the timing rounds (the runner's `checked` is False in its caller's frame) the kernel returns a
placeholder and patches its own process's runner so that the placeholder's result is computed
straight into the judge's output region, instead of into a tensor the runner then copies there.
The null kernel's rounds, subtracted from every side, still pay that copy, so the kernel's net time
comes out less than its work: 1.20-1.46x for torch.softmax against itself on the CPU (session 16).

  cd tests/agent/harness && PYTHONPATH=../../../agent/python python3 -c \
    "from harnesstest import run; print(run('../../bench/open_attacks/direct_output.py')['speedup'])"
"""
import sys
import torch

KERNEL_TYPE = "softmax"


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
            torch.ops.aten._softmax.out(x, -1, False, out=dst)
            return {"type": "Tensor", "shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", ""),
                    "device": x.device.type, "copied": True}
        return orig_place(state, out, offset, capacity)
    r._place = _place
    _st["patched"] = True


def kernel_fn(x):
    f = sys._getframe(1)
    if f.f_locals.get("checked") is False and f.f_locals.get("fn") is kernel_fn:
        if not _st["patched"]:
            _patch()
        return _Lazy(x)
    return torch.softmax(x, dim=-1)
