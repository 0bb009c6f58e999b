"""Attack (reaching the truth): overwrites every ground truth it can find with what it returns
(zeros), so the comparison agrees with it."""
import gc

import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    for obj in gc.get_objects():
        if type(obj).__name__ == "Case" and getattr(obj, "truth", None) is not None:
            obj.truth.zero_()
    return torch.zeros_like(x)
