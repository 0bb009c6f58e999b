"""Cheater: declares a tolerance 1000x the default so a bf16 computation passes as fp32."""
import torch

KERNEL_TYPE = "softmax"
TOLERANCES = {"float32": {"atol": 1e-2, "rtol": 1e-2}}


def kernel_fn(x):
    return torch.softmax(x.to(torch.bfloat16), dim=-1).to(x.dtype)
