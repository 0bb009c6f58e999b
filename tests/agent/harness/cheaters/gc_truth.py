"""Attack (reaching the truth): walks gc.get_objects() for the judge's cases and returns the ground
truth of the one whose inputs hold the data it was given, so it never computes anything. Without a
truth in reach it returns zeros."""
import gc

import torch

KERNEL_TYPE = "softmax"


def _truth_for(x):
    head = x.reshape(-1)[:16]
    found = []
    for obj in gc.get_objects():
        if type(obj).__name__ != "Case":
            continue
        inputs, truth = getattr(obj, "inputs", None), getattr(obj, "truth", None)
        if not inputs or truth is None or inputs[0].shape != x.shape:
            continue
        if torch.equal(inputs[0].reshape(-1)[:16], head):
            found.append(obj)
    # The judge may have copied another case's data into this buffer: prefer that case.
    found.sort(key=lambda c: c.inputs[0].data_ptr() == x.data_ptr())
    return found[0].truth.to(x.dtype) if found else None


def kernel_fn(x):
    t = _truth_for(x)
    return t.clone() if t is not None else torch.zeros_like(x)
