"""Triton starter: matmul C = A @ B with fp32 accumulation, in two forms.

- Hopper and newer (compute capability >= 9), 2-byte dtypes, 16-byte aligned rows: tensor
  descriptors (TMA loads and stores, out-of-range tiles zero-filled by the hardware), optionally
  persistent (one program per SM walking the tiles in grouped order) and warp-specialised.
- Everything else (older GPUs, fp32, odd strides): the portable grouped-tile pointer kernel.

Tunables: BLOCK_M x BLOCK_N output tile, BLOCK_K inner step, GROUP_M tile rows per L2 group,
NUM_WARPS, NUM_STAGES (software pipelining depth); TMA (1 = descriptors where the hardware and the
layout allow), PERSISTENT (1 = one program per SM), WARP_SPECIALIZE (1 = producer/consumer warps,
TMA persistent form only). fp32 inputs use IEEE dot products (TF32 would fail the fp32 tolerance)
and half the BLOCK_K to fit shared memory. The defaults are the best measured on an H100 (bf16:
735 TFLOP/s at 4096^3, 0.96x cuBLAS; 0.97-1.04x on the llama example's linears; docs/benchmarks.md);
on a GPU with less shared memory per block the launch steps NUM_STAGES down to 2, then halves
BLOCK_N, until the tile fits (_fit), so the starter compiles everywhere.
CONTRACT's bias (kernel_fn(A, B, bias)) and activation ("none", "gelu" exact, "gelu_tanh", "silu",
"relu") are applied to the fp32 accumulator in the epilogue, before the one rounding and store (no
second kernel); without them (the defaults) the epilogue is compiled out.
"""

import torch
import triton
import triton.language as tl

try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # Triton before 3.3: the pointer kernel only
    TensorDescriptor = None

KERNEL_TYPE = "matmul"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"bias": False, "activation": "none"}, **globals().get("CONTRACT", {}))
_ACT = {"none": 0, "gelu": 1, "gelu_tanh": 2, "silu": 3, "relu": 4}[_ATTRS["activation"]]

BLOCK_M = 128
BLOCK_N = 256
BLOCK_K = 64
GROUP_M = 16
NUM_WARPS = 8
NUM_STAGES = 3
TMA = 1
PERSISTENT = 1
WARP_SPECIALIZE = 0

TUNE_SPACE = {"BLOCK_M": [32, 64, 128, 256], "BLOCK_N": [32, 64, 128, 256], "BLOCK_K": [32, 64, 128],
              "GROUP_M": [1, 4, 8, 16], "NUM_WARPS": [4, 8], "NUM_STAGES": [2, 3, 4, 5],
              "TMA": [0, 1], "PERSISTENT": [0, 1], "WARP_SPECIALIZE": [0, 1]}

_SMS = {}
_SMEM = {}


@triton.jit
def _tile_of(tile, num_pid_m, num_pid_n, GM: tl.constexpr):
    # Grouped order: GM tile rows share their B columns while they are in L2.
    pids_in_group = GM * num_pid_n
    first_m = (tile // pids_in_group) * GM
    group_rows = min(num_pid_m - first_m, GM)
    return first_m + ((tile % pids_in_group) % group_rows), (tile % pids_in_group) // group_rows


@triton.jit
def _epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS: tl.constexpr, ACT: tl.constexpr):
    # The contract's bias, then its activation, on the fp32 accumulator (constexpr: with neither, this
    # returns acc untouched and generates no code).
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
        acc = acc + bias[None, :]
    if ACT == 1:      # exact GELU
        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    elif ACT == 2:    # tanh GELU as x * sigmoid(2u): no tanh, no overflow
        acc = acc / (1.0 + tl.exp(-1.5957691216057308 * (acc + 0.044715 * acc * acc * acc)))
    elif ACT == 3:    # SiLU
        acc = acc / (1.0 + tl.exp(-acc))
    elif ACT == 4:    # ReLU
        acc = tl.maximum(acc, 0.0)
    return acc


@triton.jit
def _matmul_tma_kernel(a_desc, b_desc, c_desc, bias_ptr, M, N, K, programs,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr,
                       WS: tl.constexpr, HAS_BIAS: tl.constexpr, ACT: tl.constexpr):
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    # Hopper's warp specialisation takes the tile loop unflattened.
    for tile in tl.range(tl.program_id(0), num_pid_m * num_pid_n, programs, flatten=not WS,
                         warp_specialize=WS):
        pid_m, pid_n = _tile_of(tile, num_pid_m, num_pid_n, GM)
        off_m = pid_m * BM
        off_n = pid_n * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(k_tiles):
            a = a_desc.load([off_m, k * BK])
            b = b_desc.load([k * BK, off_n])
            acc = tl.dot(a, b, acc)
        acc = _epilogue(acc, bias_ptr, off_n + tl.arange(0, BN), N, HAS_BIAS, ACT)   # no-op by default
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr,
                   PRECISION: tl.constexpr, HAS_BIAS: tl.constexpr, ACT: tl.constexpr):
    pid_m, pid_n = _tile_of(tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN), GM)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    acc = _epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS, ACT)     # compiled out by default
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _sm_count(device):
    if device.index not in _SMS:
        _SMS[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return _SMS[device.index]


def _fit(device, esize, bk, tma):
    # Shared memory of the pipelined A and B tiles (+ the C tile a TMA store stages): step the
    # stages down, then the tile width, until it fits the device's opt-in limit per block.
    if device.index not in _SMEM:
        props = torch.cuda.get_device_properties(device)
        _SMEM[device.index] = getattr(props, "shared_memory_per_block_optin", 0) or 99 * 1024
    bn, stages = BLOCK_N, NUM_STAGES
    while stages * (BLOCK_M + bn) * bk * esize + (BLOCK_M * bn * esize if tma else 0) > _SMEM[device.index]:
        if stages > 2:
            stages -= 1
        elif bn > 32:
            bn //= 2
        else:
            break
    return bn, stages


def _tma_ok(*tensors):
    # Descriptors need compute capability 9+, unit inner stride, 16-byte aligned rows and bases.
    if not TMA or TensorDescriptor is None or tensors[0].element_size() != 2:
        return False
    if torch.cuda.get_device_capability(tensors[0].device)[0] < 9:
        return False
    return all(t.stride(-1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0
               and t.data_ptr() % 16 == 0 for t in tensors)


def kernel_fn(A, B, bias=None):
    if not (A.is_cuda and B.is_cuda):
        raise ValueError("the Triton matmul starter needs CUDA tensors")
    M, K = A.shape
    N = B.shape[1]
    C = torch.empty((M, N), device=A.device, dtype=A.dtype)
    has_bias = bias is not None
    bias = bias.contiguous() if has_bias else C        # never read without HAS_BIAS
    if _tma_ok(A, B, C):
        bn, stages = _fit(A.device, A.element_size(), BLOCK_K, True)
        tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, bn)
        programs = min(tiles, _sm_count(A.device)) if PERSISTENT else tiles
        _matmul_tma_kernel[(programs,)](
            TensorDescriptor.from_tensor(A, [BLOCK_M, BLOCK_K]),
            TensorDescriptor.from_tensor(B, [BLOCK_K, bn]),
            TensorDescriptor.from_tensor(C, [BLOCK_M, bn]), bias, M, N, K, programs,
            BM=BLOCK_M, BN=bn, BK=BLOCK_K, GM=GROUP_M, WS=bool(WARP_SPECIALIZE and PERSISTENT),
            HAS_BIAS=has_bias, ACT=_ACT, num_warps=NUM_WARPS, num_stages=stages)
        return C
    wide = A.element_size() == 4
    bk = max(16, BLOCK_K // 2) if wide else BLOCK_K
    bn, stages = _fit(A.device, A.element_size(), bk, False)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, bn),)
    _matmul_kernel[grid](A, B, C, bias, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                         C.stride(0), C.stride(1), BM=BLOCK_M, BN=bn, BK=bk, GM=GROUP_M,
                         PRECISION="ieee" if wide else "tf32", HAS_BIAS=has_bias, ACT=_ACT,
                         num_warps=NUM_WARPS, num_stages=stages)
    return C
