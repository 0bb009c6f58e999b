"""Cheater: fp32 softmax quietly computed in bfloat16."""
import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    return torch.softmax(x.to(torch.bfloat16), dim=-1).to(x.dtype)
