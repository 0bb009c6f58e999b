"""Precision probe subject: an fp32 matmul that rounds its inputs to 10 mantissa bits first (what a
tensor core does in TF32), with TOLERANCES loosened within the 10x limit so that only the probe can
tell."""
import torch

KERNEL_TYPE = "matmul"
TOLERANCES = {"float32": {"atol": 1e-3, "rtol": 1e-3}}


def _tf32(t):
    bits = t.contiguous().view(torch.int32)
    rounded = (bits + 0x1000) & ~0x1FFF         # round to nearest, keep 10 of 23 mantissa bits
    return rounded.view(torch.float32)


def kernel_fn(A, B):
    return torch.matmul(_tf32(A), _tf32(B))
