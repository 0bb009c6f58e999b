"""Triton starter: flash attention forward (online softmax, fp32 accumulators, exp2), in the
FlashAttention-2 form. CONTRACT: causal (default) or not, scale (null = 1/sqrt(D)). Not causal: every
key block up to the last whole one is walked without a mask, then the partial last block (TAIL) with
its columns masked.

Each program owns BLOCK_M query rows of one (batch, head); the heaviest row blocks (those near the
end of the sequence) are launched first so the causal triangle does not leave a tail. Key blocks
left of the diagonal are walked without any mask; only the BLOCK_M-wide diagonal strip is masked,
and the masked half is never computed. Tunables: BLOCK_M, BLOCK_N (at most BLOCK_M), NUM_WARPS,
NUM_STAGES. fp32 inputs use IEEE dot products and half the BLOCK_N (shared memory). The defaults
are the best measured on an H100 (bf16, 4x16x2048x128: 372 TFLOP/s, 1.65x the earlier starter,
0.81x SDPA; docs/benchmarks.md); where the device's shared memory per block is smaller, the launch
steps NUM_STAGES down until the tiles fit.
"""

import math

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "flash_attention"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"causal": True, "scale": None}, **globals().get("CONTRACT", {}))
_CAUSAL = bool(_ATTRS["causal"])
_SCALE = _ATTRS["scale"]

BLOCK_M = 64
BLOCK_N = 64
NUM_WARPS = 4
NUM_STAGES = 3

TUNE_SPACE = {"BLOCK_M": [32, 64, 128, 256], "BLOCK_N": [16, 32, 64, 128], "NUM_WARPS": [4, 8],
              "NUM_STAGES": [1, 2, 3, 4]}


@triton.jit
def _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m, lo, hi, S, D,
                 qk_scale, BN: tl.constexpr, BD: tl.constexpr, DIAGONAL: tl.constexpr,
                 EVEN_D: tl.constexpr, PRECISION: tl.constexpr, TAIL: tl.constexpr):
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, BD)
    for start_n in range(lo, hi, BN):
        cols = start_n + offs_n
        k_ptrs = k_base + cols[None, :] * sks + offs_d[:, None] * skd
        v_ptrs = v_base + cols[:, None] * svs + offs_d[None, :] * svd
        if DIAGONAL:
            k = tl.load(k_ptrs, mask=(cols[None, :] < S) & (offs_d[:, None] < D), other=0.0)
            v = tl.load(v_ptrs, mask=(cols[:, None] < S) & (offs_d[None, :] < D), other=0.0)
        elif TAIL:
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
        if TAIL:   # not causal: only the columns past the sequence are hidden
            qk = tl.where(cols[None, :] < S, qk, -float("inf"))
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
              PRECISION: tl.constexpr, CAUSAL: tl.constexpr = True):
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
    if CAUSAL:
        diagonal = start_m * BM                  # BN divides BM: the strip starts on a block
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m,
                                     0, diagonal, S, D, qk_scale, BN, BD, False, EVEN_D, PRECISION, False)
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m,
                                     diagonal, tl.minimum(diagonal + BM, S), S, D, qk_scale, BN, BD,
                                     True, EVEN_D, PRECISION, False)
    else:
        full = (S // BN) * BN                    # whole key blocks: no column mask
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m,
                                     0, full, S, D, qk_scale, BN, BD, False, EVEN_D, PRECISION, False)
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, k_base, v_base, sks, skd, svs, svd, offs_m,
                                     full, S, S, D, qk_scale, BN, BD, False, EVEN_D, PRECISION, True)
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :] * sod,
             out.to(o_ptr.dtype.element_ty), mask=(offs_m[:, None] < S) & (offs_d[None, :] < D))


def kernel_fn(Q, K, V):
    if not (Q.is_cuda and K.is_cuda and V.is_cuda):
        raise ValueError("the Triton flash_attention starter needs CUDA tensors")
    B, H, S, D = Q.shape
    O = torch.empty_like(Q)
    wide = Q.element_size() == 4
    bn = min(max(16, BLOCK_N // 2) if wide else BLOCK_N, BLOCK_M)
    bd = max(16, triton.next_power_of_2(D))
    scale = 1.0 / math.sqrt(D) if _SCALE is None else float(_SCALE)
    qk_scale = scale * 1.4426950408889634   # exp(x) = exp2(x * log2(e))
    # Q tile + pipelined K and V tiles must fit the device's shared memory per block.
    limit = getattr(torch.cuda.get_device_properties(Q.device), "shared_memory_per_block_optin", 0) or 99 * 1024
    stages = NUM_STAGES
    while stages > 1 and (BLOCK_M + 2 * stages * bn) * bd * Q.element_size() > limit:
        stages -= 1
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _attn_fwd[grid](Q, K, V, O, *Q.stride(), *K.stride(), *V.stride(), *O.stride(), H, S, D, qk_scale,
                    BM=BLOCK_M, BN=bn, BD=bd, EVEN_D=bd == D, PRECISION="ieee" if wide else "tf32",
                    CAUSAL=_CAUSAL, num_warps=NUM_WARPS, num_stages=stages)
    return O
