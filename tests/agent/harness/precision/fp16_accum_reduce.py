"""Precision probe subject: fp16 row sums accumulated in fp16 (blocks of 64 summed in fp32, each added
to an fp16 running total), the shortcut of a Triton reduction with an fp16 accumulator."""
import torch

KERNEL_TYPE = "reduce"
TEST_DTYPES = ["float16"]


def kernel_fn(x):
    acc = torch.zeros(x.shape[:-1], dtype=torch.float16)
    for k0 in range(0, x.shape[-1], 64):
        acc += x[..., k0:k0 + 64].float().sum(-1).to(torch.float16)
    return acc
