"""Triton flash attention candidate (session 19): the shipped FA2 starter plus a Hopper path through
TMA tensor descriptors. Measured on an H100 (docs/runs/h100-s19-attention-tma-sweep.md): it lost
with its defaults (128x64, 8 warps: 0.73x SDPA at 4x16x2048x128, against the shipped 0.81x); TMA
with 64x64 and 4 warps gained 6 % at head dim 128 (0.86x) but lost 42 % at head dim 64, so nothing
was promoted. Correct in every harness stage (quick and full).

With TMA=1 on a device of compute capability 9+, for 2-byte Q/K/V laid out [B, H, S, D] and
contiguous, D 64 or 128 and S a multiple of both block sizes, Q/K/V/O are read and written
through host-made tensor descriptors over the flattened [B*H*S, D] rows (the tile loads become
TMA copies that Triton pipelines; K is loaded as stored and transposed in registers for Q.K^T),
with BLOCK_M 128 and 8 warps as defaults: two warp groups of 64 rows each, the shape Hopper's
wgmma wants. Anything else takes the shipped pointer kernel. Tunables: BLOCK_M, BLOCK_N,
NUM_WARPS, NUM_STAGES, TMA.
"""

import math

import torch
import triton
import triton.language as tl

try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # Triton before 3.3: the pointer kernel only
    TensorDescriptor = None

KERNEL_TYPE = "flash_attention"

BLOCK_M = 128
BLOCK_N = 64
NUM_WARPS = 8
NUM_STAGES = 3
TMA = 1

TUNE_SPACE = {"BLOCK_M": [32, 64, 128, 256], "BLOCK_N": [16, 32, 64, 128], "NUM_WARPS": [4, 8],
              "NUM_STAGES": [1, 2, 3, 4], "TMA": [0, 1]}


@triton.jit
def _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m, lo, hi, S, D,
                 qk_scale, BN: tl.constexpr, BD: tl.constexpr, DIAGONAL: tl.constexpr,
                 EVEN_D: tl.constexpr, PRECISION: tl.constexpr):
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, BD)
    for start_n in range(lo, hi, BN):
        cols = start_n + offs_n
        k_ptrs = k_base + cols[None, :] * sks + offs_d[:, None] * skd
        v_ptrs = v_base + cols[:, None] * svs + offs_d[None, :] * svd
        if DIAGONAL:
            k = tl.load(k_ptrs, mask=(cols[None, :] < S) & (offs_d[:, None] < D), other=0.0)
            v = tl.load(v_ptrs, mask=(cols[:, None] < S) & (offs_d[None, :] < D), other=0.0)
        elif EVEN_D:
            k = tl.load(k_ptrs)   # left of the diagonal every column exists
            v = tl.load(v_ptrs)
        else:
            k = tl.load(k_ptrs, mask=offs_d[:, None] < D, other=0.0)
            v = tl.load(v_ptrs, mask=offs_d[None, :] < D, other=0.0)
        qk = tl.dot(q, k, input_precision=PRECISION) * qk_scale
        if DIAGONAL:
            visible = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
            qk = tl.where(visible, qk, -float("inf"))
        # Column 0 is visible to every row, so m_new is finite from a row's first block on.
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr,
              sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sob, soh, sos, sod,
              H, S, D, qk_scale,
              BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr, EVEN_D: tl.constexpr,
              PRECISION: tl.constexpr):
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)   # longest rows first
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    k_base = k_ptr + b * skb + h * skh
    v_base = v_ptr + b * svb + h * svh

    offs_m = start_m * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, BD)
    q = tl.load(q_ptr + b * sqb + h * sqh + offs_m[:, None] * sqs + offs_d[None, :] * sqd,
                mask=(offs_m[:, None] < S) & (offs_d[None, :] < D), other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, BD), tl.float32)
    diagonal = start_m * BM                  # BN divides BM: the strip starts on a block
    acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m,
                                 0, diagonal, S, D, qk_scale, BN, BD, False, EVEN_D, PRECISION)
    acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m,
                                 diagonal, tl.minimum(diagonal + BM, S), S, D, qk_scale, BN, BD,
                                 True, EVEN_D, PRECISION)
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :] * sod,
             out.to(o_ptr.dtype.element_ty), mask=(offs_m[:, None] < S) & (offs_d[None, :] < D))


@triton.jit
def _tma_blocks(acc, l_i, m_i, q, desc_k, desc_v, row0, offs_m, lo, hi, qk_scale,
                BN: tl.constexpr, DIAGONAL: tl.constexpr):
    offs_n = tl.arange(0, BN)
    for start_n in tl.range(lo, hi, BN):
        k = desc_k.load([row0 + start_n, 0])
        qk = tl.dot(q, k.T)
        if DIAGONAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
        p = tl.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = desc_v.load([row0 + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attn_fwd_tma(desc_q, desc_k, desc_v, desc_o, S, qk_scale,
                  BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr):
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)   # longest rows first
    row0 = tl.program_id(1) * S                             # this (batch, head)'s first row
    offs_m = start_m * BM + tl.arange(0, BM)
    q = desc_q.load([row0 + start_m * BM, 0])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, BD), tl.float32)
    diagonal = start_m * BM
    acc, l_i, m_i = _tma_blocks(acc, l_i, m_i, q, desc_k, desc_v, row0, offs_m, 0, diagonal, qk_scale,
                                BN, False)
    acc, l_i, m_i = _tma_blocks(acc, l_i, m_i, q, desc_k, desc_v, row0, offs_m, diagonal, diagonal + BM,
                                qk_scale, BN, True)
    desc_o.store([row0 + start_m * BM, 0], (acc / l_i[:, None]).to(desc_o.dtype))


def _tma_ok(Q, K, V, O, bm, bn):
    if not TMA or TensorDescriptor is None or Q.element_size() != 2:
        return False
    if torch.cuda.get_device_capability(Q.device)[0] < 9:
        return False
    B, H, S, D = Q.shape
    if D not in (64, 128) or S % bm or S % bn or bn > bm:
        return False
    return all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (Q, K, V, O))


def kernel_fn(Q, K, V):
    if not (Q.is_cuda and K.is_cuda and V.is_cuda):
        raise ValueError("the Triton flash_attention starter needs CUDA tensors")
    B, H, S, D = Q.shape
    O = torch.empty_like(Q)
    if _tma_ok(Q, K, V, O, BLOCK_M, BLOCK_N):
        rows = B * H * S
        descs = [TensorDescriptor.from_tensor(t.view(rows, D), [BLOCK_M if t is Q or t is O else BLOCK_N, D])
                 for t in (Q, K, V, O)]
        qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634
        # The Q tile, the O tile a TMA store stages, and the pipelined K and V tiles must fit.
        limit = getattr(torch.cuda.get_device_properties(Q.device), "shared_memory_per_block_optin", 0) or 99 * 1024
        stages = NUM_STAGES
        while stages > 1 and (2 * BLOCK_M + 2 * stages * BLOCK_N) * D * 2 > limit:
            stages -= 1
        _attn_fwd_tma[(S // BLOCK_M, B * H)](*descs, S, qk_scale, BM=BLOCK_M, BN=BLOCK_N, BD=D,
                                              num_warps=NUM_WARPS, num_stages=stages)
        return O
    wide = Q.element_size() == 4
    bn = min(max(16, BLOCK_N // 2) if wide else BLOCK_N, BLOCK_M)
    bd = max(16, triton.next_power_of_2(D))
    qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634   # exp(x) = exp2(x * log2(e))
    # Q tile + pipelined K and V tiles must fit the device's shared memory per block.
    limit = getattr(torch.cuda.get_device_properties(Q.device), "shared_memory_per_block_optin", 0) or 99 * 1024
    stages = NUM_STAGES
    while stages > 1 and (BLOCK_M + 2 * stages * bn) * bd * Q.element_size() > limit:
        stages -= 1
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _attn_fwd[grid](Q, K, V, O, *Q.stride(), *K.stride(), *V.stride(), *O.stride(), H, S, D, qk_scale,
                    BM=BLOCK_M, BN=bn, BD=bd, EVEN_D=bd == D, PRECISION="ieee" if wide else "tf32",
                    num_warps=NUM_WARPS, num_stages=stages)
    return O
