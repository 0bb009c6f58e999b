"""CPU starter: matmul C = A @ B, blocked over rows of A and over K.

Tunables: BLOCK_M rows of C per step (cache blocking), BLOCK_K slice of the inner dimension per
addmm (smaller = more passes over C), NUM_THREADS intra-op threads (0 = PyTorch's default).
fp16/bf16 inputs accumulate in fp32 and round once at the end. CONTRACT's bias (kernel_fn(A, B, bias))
and activation ("none", "gelu", "gelu_tanh", "silu", "relu") are applied to the fp32 result, in that
order, before the rounding.
"""

import contextlib

import torch
import torch.nn.functional as F

KERNEL_TYPE = "matmul"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"bias": False, "activation": "none"}, **globals().get("CONTRACT", {}))
_ACT = {"none": None, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu,
        "relu": F.relu}[_ATTRS["activation"]]

BLOCK_M = 256
BLOCK_K = 1024
NUM_THREADS = 0

TUNE_SPACE = {"BLOCK_M": [32, 64, 128, 256, 512, 1024], "BLOCK_K": [128, 256, 512, 1024, 2048, 4096],
              "NUM_THREADS": [0, 1, 2, 4]}


@contextlib.contextmanager
def _threads(n):
    """Run with n intra-op threads (0 = leave PyTorch's setting), restoring the old count."""
    old = torch.get_num_threads()
    if n and n != old:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if n and n != old:
            torch.set_num_threads(old)


def kernel_fn(A, B, bias=None):
    M, K = A.shape
    N = B.shape[1]
    acc_dtype = torch.float32 if A.dtype in (torch.float16, torch.bfloat16) else A.dtype
    a_all = A if A.dtype == acc_dtype else A.to(acc_dtype)
    b_all = B if B.dtype == acc_dtype else B.to(acc_dtype)
    C = torch.empty((M, N), dtype=acc_dtype)
    with _threads(NUM_THREADS):
        for m0 in range(0, M, BLOCK_M):
            a = a_all[m0:m0 + BLOCK_M]
            c = C[m0:m0 + BLOCK_M]
            torch.mm(a[:, :BLOCK_K], b_all[:BLOCK_K], out=c)
            for k0 in range(BLOCK_K, K, BLOCK_K):
                c.addmm_(a[:, k0:k0 + BLOCK_K], b_all[k0:k0 + BLOCK_K])
        if bias is not None:
            C.add_(bias.to(acc_dtype))
        if _ACT is not None:
            C = _ACT(C)
    return C if C.dtype == A.dtype else C.to(A.dtype)
