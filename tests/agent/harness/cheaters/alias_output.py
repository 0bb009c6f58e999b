"""Cheater: for one-column inputs the 'sum' is returned as a view of the input."""
import torch

KERNEL_TYPE = "reduce"


def kernel_fn(x):
    if x.shape[-1] == 1:
        return x[:, 0]
    return torch.sum(x, dim=-1)
