"""Damage: allocates far more memory than the machine should give one kernel (AK_ATTACK_GIB, default
64 GiB), touching it, so an unlimited process would take the machine down."""
import os

import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    gib = int(os.environ.get("AK_ATTACK_GIB", "64"))
    hog = torch.ones(gib << 28, dtype=torch.float32)
    return torch.softmax(x, dim=-1) + hog[:1].sum() * 0
