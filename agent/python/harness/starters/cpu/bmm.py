"""CPU starter: batched matmul C[b] = A[b] @ B[b], a slice of the batch per step.

Tunables: BLOCK_B batch entries per torch.bmm call (smaller keeps a step's operands in cache),
NUM_THREADS intra-op threads (0 = PyTorch's default). fp16/bf16 inputs accumulate in fp32 and round
once at the end. CONTRACT's b_transposed: the right operand comes as Bt[batch, N, K] (the model's k
itself, not k.transpose(-2, -1)) and is read through a transposed view, never copied.
"""

import contextlib

import torch

KERNEL_TYPE = "bmm"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"b_transposed": False}, **globals().get("CONTRACT", {}))
_BT = bool(_ATTRS["b_transposed"])

BLOCK_B = 64
NUM_THREADS = 0

TUNE_SPACE = {"BLOCK_B": [1, 4, 16, 64, 256, 1024], "NUM_THREADS": [0, 1, 2, 4]}


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


def kernel_fn(A, B):
    batch, M, K = A.shape
    b = B.transpose(1, 2) if _BT else B          # [batch, K, N] either way (a view)
    if b.shape[0] != batch or b.shape[1] != K:
        raise ValueError("bmm: A %s and %s %s do not multiply per batch"
                         % (list(A.shape), "Bt" if _BT else "B", list(B.shape)))
    N = b.shape[2]
    acc_dtype = torch.float32 if A.dtype in (torch.float16, torch.bfloat16) else A.dtype
    a_all = A if A.dtype == acc_dtype else A.to(acc_dtype)
    b_all = b if b.dtype == acc_dtype else b.to(acc_dtype)
    C = torch.empty((batch, M, N), dtype=acc_dtype)
    step = max(1, BLOCK_B)
    with _threads(NUM_THREADS):
        for b0 in range(0, batch, step):
            torch.bmm(a_all[b0:b0 + step], b_all[b0:b0 + step], out=C[b0:b0 + step])
    return C if C.dtype == A.dtype else C.to(A.dtype)
