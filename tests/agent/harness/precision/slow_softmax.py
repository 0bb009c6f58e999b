"""Cold re-check subject: a correct softmax that does its work three times over (slower than PyTorch's)."""
import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    y = None
    for _ in range(3):
        y = torch.softmax(x.double(), dim=-1).to(x.dtype)
    return y
