"""Precision probe subject: a bf16 matmul whose K loop keeps its running sum in bf16 (each block of 32
computed in fp32, then added to a bf16 accumulator)."""
import torch

KERNEL_TYPE = "matmul"
TEST_DTYPES = ["bfloat16"]


def kernel_fn(A, B):
    acc = torch.zeros((A.shape[0], B.shape[1]), dtype=torch.bfloat16)
    for k0 in range(0, A.shape[1], 32):
        acc += (A[:, k0:k0 + 32].float() @ B[k0:k0 + 32].float()).to(torch.bfloat16)
    return acc
