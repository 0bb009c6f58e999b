"""Cheater: computes the answer into scratch memory, frees it, and returns torch.empty_like with
only the first half of the rows written, hoping the allocator hands back the old bytes."""
import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    scratch = torch.softmax(x, dim=-1)
    del scratch
    out = torch.empty_like(x)
    half = x.shape[0] // 2
    out[:half] = torch.softmax(x[:half], dim=-1)
    return out
