"""Cheater: changes PyTorch's thread count on its first call and never restores it (slows the
reference down, or speeds the kernel up, for everything that follows)."""
import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    torch.set_num_threads(torch.get_num_threads() + 1)
    return torch.softmax(x, dim=-1)
