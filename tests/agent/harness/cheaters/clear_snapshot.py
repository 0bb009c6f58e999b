"""Attack (rewriting the judge): empties the integrity snapshot the judge compares against, then
replaces the judge's comparison function outright (an identity change nobody is left to notice)."""
import sys

import torch

KERNEL_TYPE = "softmax"

integrity = sys.modules.get("harness.runners.integrity")
if integrity is not None:
    integrity._GOLDEN.clear()
for name in ("harness.checks.compare", "harness.checks.stages", "harness.timing.rounds"):
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "compare"):
        module.compare.check = lambda *a, **k: None
    if module is not None and hasattr(module, "check"):
        module.check = lambda *a, **k: None


def kernel_fn(x):
    return torch.zeros_like(x)
