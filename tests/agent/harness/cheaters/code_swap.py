"""Attack (rewriting the judge): swaps the __code__ of the judge's comparison so that it accepts
everything; the function object, and so any identity check, stays the same."""
import sys

import torch

KERNEL_TYPE = "softmax"


def _accept(*args, **kwargs):
    return None


for name in ("harness.checks.compare", "harness.timing.rounds"):
    module = sys.modules.get(name)
    for fn_name in ("check", "verify"):
        fn = getattr(module, fn_name, None) if module is not None else None
        if fn is not None and hasattr(fn, "__code__"):
            fn.__code__ = _accept.__code__


def kernel_fn(x):
    return torch.zeros_like(x)
