"""Cheater: softmax computed in place in the input, which is returned."""
import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    x.sub_(x.amax(dim=-1, keepdim=True)).exp_()
    return x.div_(x.sum(dim=-1, keepdim=True))
