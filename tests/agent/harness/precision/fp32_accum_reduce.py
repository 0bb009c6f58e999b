"""Precision probe control: the same blocked fp16 row sum as fp16_accum_reduce.py, accumulated in fp32
and rounded once: it must not be flagged."""
import torch

KERNEL_TYPE = "reduce"
TEST_DTYPES = ["float16"]


def kernel_fn(x):
    acc = torch.zeros(x.shape[:-1], dtype=torch.float32)
    for k0 in range(0, x.shape[-1], 64):
        acc += x[..., k0:k0 + 64].float().sum(-1)
    return acc.to(torch.float16)
