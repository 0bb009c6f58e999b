"""Cheater (or just a bug): softmax without subtracting the row max overflows to inf/NaN on
large inputs."""
import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    e = torch.exp(x.float())
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)
