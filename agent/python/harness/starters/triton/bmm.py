"""Triton starter: batched matmul C[b] = A[b] @ B[b] with fp32 accumulation.

One program per (output tile, batch entry): the grid's first axis walks the M x N tiles in grouped
order (GROUP_M tile rows share their B columns in L2), the second the batch (launched in chunks of
65535, the limit of that axis). CONTRACT's b_transposed: the right operand comes as Bt[batch, N, K]
(the model's k, not k.transpose(-2, -1)); the same kernel reads it through swapped strides, so
neither layout is copied. fp32 inputs use IEEE dot products (TF32 would fail the fp32 tolerance)
and half the BLOCK_K.

Tunables: BLOCK_M x BLOCK_N output tile, BLOCK_K inner step, GROUP_M, NUM_WARPS, NUM_STAGES.
Attention's shapes are small per batch entry (K = head dim 64 for the scores, N = 64 for the
product with V): the defaults favour a 128 x 64 tile.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "bmm"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"b_transposed": False}, **globals().get("CONTRACT", {}))
_BT = bool(_ATTRS["b_transposed"])

BLOCK_M = 128
BLOCK_N = 64
BLOCK_K = 64
GROUP_M = 8
NUM_WARPS = 4
NUM_STAGES = 3

TUNE_SPACE = {"BLOCK_M": [32, 64, 128, 256], "BLOCK_N": [32, 64, 128, 256], "BLOCK_K": [32, 64, 128],
              "GROUP_M": [1, 4, 8, 16], "NUM_WARPS": [2, 4, 8], "NUM_STAGES": [2, 3, 4, 5]}

_MAX_GRID_Y = 65535


@triton.jit
def _bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
                stride_cb, stride_cm, stride_cn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr,
                PRECISION: tl.constexpr):
    # Grouped tile order within one batch entry (program_id(1)).
    tile = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    pids_in_group = GM * num_pid_n
    first_m = (tile // pids_in_group) * GM
    group_rows = min(num_pid_m - first_m, GM)
    pid_m = first_m + ((tile % pids_in_group) % group_rows)
    pid_n = (tile % pids_in_group) // group_rows
    batch = tl.program_id(1).to(tl.int64)
    a_ptr += batch * stride_ab
    b_ptr += batch * stride_bb
    c_ptr += batch * stride_cb
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def kernel_fn(A, B):
    if not (A.is_cuda and B.is_cuda):
        raise ValueError("the Triton bmm starter needs CUDA tensors")
    batch, M, K = A.shape
    if _BT:   # Bt[batch, N, K]: element (k, n) of B[b] is Bt[b, n, k]
        N = B.shape[1]
        stride_bk, stride_bn = B.stride(2), B.stride(1)
        k_of_b = B.shape[2]
    else:     # B[batch, K, N]
        N = B.shape[2]
        stride_bk, stride_bn = B.stride(1), B.stride(2)
        k_of_b = B.shape[1]
    if B.shape[0] != batch or k_of_b != K:
        raise ValueError("bmm: A %s and %s %s do not multiply per batch"
                         % (list(A.shape), "Bt" if _BT else "B", list(B.shape)))
    C = torch.empty((batch, M, N), device=A.device, dtype=A.dtype)
    if C.numel() == 0:
        return C
    wide = A.element_size() == 4
    bk = max(16, BLOCK_K // 2) if wide else BLOCK_K
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    for b0 in range(0, batch, _MAX_GRID_Y):
        n = min(_MAX_GRID_Y, batch - b0)
        a, b, c = A[b0:b0 + n], B[b0:b0 + n], C[b0:b0 + n]
        _bmm_kernel[(tiles, n)](a, b, c, M, N, K,
                                a.stride(0), a.stride(1), a.stride(2), b.stride(0), stride_bk, stride_bn,
                                c.stride(0), c.stride(1), c.stride(2),
                                BM=BLOCK_M, BN=BLOCK_N, BK=bk, GM=GROUP_M,
                                PRECISION="ieee" if wide else "tf32",
                                num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return C
