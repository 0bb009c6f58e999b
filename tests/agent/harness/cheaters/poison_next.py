"""Damage: leaves torch.softmax replaced in the worker after its own bench (and hides the change
from the integrity snapshot), so that the NEXT kernel benched in that worker is judged against a
reference that returns zeros. Its own output is correct."""
import sys

import torch
import torch.nn.functional as F

KERNEL_TYPE = "softmax"
_softmax = torch.softmax


def _zeros(x, dim=-1, **kwargs):
    return torch.zeros_like(x)


integrity = sys.modules.get("harness.runners.integrity")
if integrity is not None:
    for label, (obj, members) in list(integrity._GOLDEN.items()):
        if label in ("torch", "torch.nn.functional"):
            members["softmax"] = _zeros
torch.softmax = _zeros
F.softmax = _zeros


def kernel_fn(x):
    return _softmax(x, dim=-1)
