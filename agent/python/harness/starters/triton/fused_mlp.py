"""Triton starter: SwiGLU MLP in two kernels.

1. gate/up: one pass over x computes both x W_gate^T and x W_up^T tiles (x is read once) and
   writes h = silu(gate) * up, computed in fp32 and rounded once.
2. down: h W_down^T, a grouped tiled matmul.
On Hopper and newer with 2-byte dtypes and 16-byte aligned rows both kernels read and write
through tensor descriptors (TMA) and may run persistent (one program per SM); elsewhere portable
pointer kernels. Tunables: BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_WARPS, NUM_STAGES (shared by
both kernels), TMA, PERSISTENT. fp32 inputs use IEEE dot products and half the BLOCK_K (shared
memory). Measured on an H100 (bf16, the llama example's 8192x2048x5632): 563 TFLOP/s with these
defaults (the earlier pointer starter 525), 611 with NUM_STAGES 4 (1.00x PyTorch), the Hopper prior
of resources/tune-priors.json; the defaults stay at 3 stages, which fit GPUs with less shared memory.
"""

import torch
import triton
import triton.language as tl

try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # Triton before 3.3: the pointer kernels only
    TensorDescriptor = None

KERNEL_TYPE = "fused_mlp"

BLOCK_M = 128
BLOCK_N = 128
BLOCK_K = 64
GROUP_M = 8
NUM_WARPS = 8
NUM_STAGES = 3
TMA = 1
PERSISTENT = 1

TUNE_SPACE = {"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128],
              "GROUP_M": [1, 4, 8, 16], "NUM_WARPS": [4, 8], "NUM_STAGES": [2, 3, 4],
              "TMA": [0, 1], "PERSISTENT": [0, 1]}

_SMS = {}


@triton.jit
def _tile(M, N, BM: tl.constexpr, BN: tl.constexpr, GM: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    pids_in_group = GM * num_pid_n
    first_m = (pid // pids_in_group) * GM
    group_rows = min(num_pid_m - first_m, GM)
    pid_m = first_m + ((pid % pids_in_group) % group_rows)
    pid_n = (pid % pids_in_group) // group_rows
    return pid_m, pid_n


@triton.jit
def _tile_at(tile, M, N, BM: tl.constexpr, BN: tl.constexpr, GM: tl.constexpr):
    num_pid_m = tl.cdiv(M, BM)
    pids_in_group = GM * tl.cdiv(N, BN)
    first_m = (tile // pids_in_group) * GM
    group_rows = min(num_pid_m - first_m, GM)
    return first_m + ((tile % pids_in_group) % group_rows), (tile % pids_in_group) // group_rows


@triton.jit
def _gate_up_tma_kernel(x_desc, g_desc, u_desc, h_desc, M, N, K, programs,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tl.cdiv(N, BN), programs, flatten=True):
        pid_m, pid_n = _tile_at(tile, M, N, BM, BN, GM)
        acc_g = tl.zeros((BM, BN), tl.float32)
        acc_u = tl.zeros((BM, BN), tl.float32)
        for k in range(tl.cdiv(K, BK)):
            x = x_desc.load([pid_m * BM, k * BK])
            # W is [N, K]: a [BN, BK] tile, multiplied transposed.
            acc_g = tl.dot(x, g_desc.load([pid_n * BN, k * BK]).T, acc_g)
            acc_u = tl.dot(x, u_desc.load([pid_n * BN, k * BK]).T, acc_u)
        h = acc_g / (1.0 + tl.exp(-acc_g)) * acc_u
        h_desc.store([pid_m * BM, pid_n * BN], h.to(h_desc.dtype))


@triton.jit
def _down_tma_kernel(a_desc, w_desc, c_desc, M, N, K, programs,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tl.cdiv(N, BN), programs, flatten=True):
        pid_m, pid_n = _tile_at(tile, M, N, BM, BN, GM)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), w_desc.load([pid_n * BN, k * BK]).T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def _gate_up_kernel(x_ptr, wg_ptr, wu_ptr, h_ptr, M, N, K,
                    sxm, sxk, swn, swk, shm, shn,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr,
                    PRECISION: tl.constexpr):
    pid_m, pid_n = _tile(M, N, BM, BN, GM)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * sxm + offs_k[None, :] * sxk
    # W is [N, K]; its transpose [K, N] is read through the strides.
    g_ptrs = wg_ptr + offs_k[:, None] * swk + offs_n[None, :].to(tl.int64) * swn
    u_ptrs = wu_ptr + offs_k[:, None] * swk + offs_n[None, :].to(tl.int64) * swn
    acc_g = tl.zeros((BM, BN), tl.float32)
    acc_u = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        w_mask = (offs_k[:, None] < k_left) & (offs_n[None, :] < N)
        g = tl.load(g_ptrs, mask=w_mask, other=0.0)
        u = tl.load(u_ptrs, mask=w_mask, other=0.0)
        acc_g = tl.dot(x, g, acc_g, input_precision=PRECISION)
        acc_u = tl.dot(x, u, acc_u, input_precision=PRECISION)
        x_ptrs += BK * sxk
        g_ptrs += BK * swk
        u_ptrs += BK * swk
    h = acc_g / (1.0 + tl.exp(-acc_g)) * acc_u
    h_ptrs = h_ptr + offs_m[:, None].to(tl.int64) * shm + offs_n[None, :] * shn
    tl.store(h_ptrs, h.to(h_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def _down_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr,
                 PRECISION: tl.constexpr):
    pid_m, pid_n = _tile(M, N, BM, BN, GM)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :].to(tl.int64) * sbn
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * scm + offs_n[None, :] * scn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _programs(device, M, N):
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    if not PERSISTENT:
        return tiles
    if device.index not in _SMS:
        _SMS[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return min(tiles, _SMS[device.index])


def _tma_ok(*tensors):
    # Descriptors need compute capability 9+, unit inner stride, 16-byte aligned rows and bases.
    if not TMA or TensorDescriptor is None or tensors[0].element_size() != 2:
        return False
    if torch.cuda.get_device_capability(tensors[0].device)[0] < 9:
        return False
    return all(t.stride(-1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0
               and t.data_ptr() % 16 == 0 for t in tensors)


def _tma_mlp(x, w_gate, w_up, w_down, h, out):
    M, D = x.shape
    Hd = w_gate.shape[0]
    desc = TensorDescriptor.from_tensor
    programs = _programs(x.device, M, Hd)
    _gate_up_tma_kernel[(programs,)](desc(x, [BLOCK_M, BLOCK_K]), desc(w_gate, [BLOCK_N, BLOCK_K]),
                                     desc(w_up, [BLOCK_N, BLOCK_K]), desc(h, [BLOCK_M, BLOCK_N]),
                                     M, Hd, D, programs, BM=BLOCK_M, BN=BLOCK_N, BK=BLOCK_K,
                                     GM=GROUP_M, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    programs = _programs(x.device, M, D)
    _down_tma_kernel[(programs,)](desc(h, [BLOCK_M, BLOCK_K]), desc(w_down, [BLOCK_N, BLOCK_K]),
                                  desc(out, [BLOCK_M, BLOCK_N]), M, D, Hd, programs, BM=BLOCK_M,
                                  BN=BLOCK_N, BK=BLOCK_K, GM=GROUP_M, num_warps=NUM_WARPS,
                                  num_stages=NUM_STAGES)
    return out


def kernel_fn(x, w_gate, w_up, w_down):
    if not x.is_cuda:
        raise ValueError("the Triton fused_mlp starter needs CUDA tensors")
    M, D = x.shape
    Hd = w_gate.shape[0]
    h = torch.empty((M, Hd), device=x.device, dtype=x.dtype)
    out = torch.empty((M, D), device=x.device, dtype=x.dtype)
    if _tma_ok(x, w_gate, w_up, w_down, h, out):
        return _tma_mlp(x, w_gate, w_up, w_down, h, out)
    wide = x.element_size() == 4
    bk = max(16, BLOCK_K // 2) if wide else BLOCK_K
    prec = "ieee" if wide else "tf32"
    if w_up.stride() != w_gate.stride():
        raise ValueError("w_gate and w_up must have the same layout")
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(Hd, BLOCK_N),)
    _gate_up_kernel[grid](x, w_gate, w_up, h, M, Hd, D, x.stride(0), x.stride(1),
                          w_gate.stride(0), w_gate.stride(1), h.stride(0), h.stride(1),
                          BM=BLOCK_M, BN=BLOCK_N, BK=bk, GM=GROUP_M, PRECISION=prec,
                          num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(D, BLOCK_N),)
    # out = h @ w_down^T: w_down is [D, Hd], read transposed through its strides.
    _down_kernel[grid](h, w_down, out, M, D, Hd, h.stride(0), h.stride(1),
                       w_down.stride(1), w_down.stride(0), out.stride(0), out.stride(1),
                       BM=BLOCK_M, BN=BLOCK_N, BK=bk, GM=GROUP_M, PRECISION=prec,
                       num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return out
