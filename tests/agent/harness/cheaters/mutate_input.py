"""Cheater: softmax computed in place in the input, which is returned."""
import torch  # noqa: F401 - imported as every kernel imports it: the cheat is in place, not in torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    x.sub_(x.amax(dim=-1, keepdim=True)).exp_()
    return x.div_(x.sum(dim=-1, keepdim=True))
