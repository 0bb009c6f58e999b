"""Triton starter: causal flash attention forward (online softmax, fp32 accumulators, exp2).

Each program owns BLOCK_M query rows of one (batch, head) and walks key blocks of BLOCK_N only up
to its diagonal, so the masked half is never computed. Tunables: BLOCK_M, BLOCK_N, NUM_WARPS,
NUM_STAGES. fp32 inputs use IEEE dot products and half the BLOCK_N (shared memory).
"""

import math

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "flash_attention"

BLOCK_M = 128
BLOCK_N = 64
NUM_WARPS = 8
NUM_STAGES = 2

TUNE_SPACE = {"BLOCK_M": [32, 64, 128, 256], "BLOCK_N": [16, 32, 64, 128], "NUM_WARPS": [4, 8],
              "NUM_STAGES": [1, 2, 3, 4]}


@triton.jit
def _attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr,
              sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sob, soh, sos, sod,
              H, S, D, qk_scale,
              BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr, PRECISION: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    q_base = q_ptr + b * sqb + h * sqh
    k_base = k_ptr + b * skb + h * skh
    v_base = v_ptr + b * svb + h * svh
    o_base = o_ptr + b * sob + h * soh

    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, BD)
    d_ok = offs_d < D
    q = tl.load(q_base + offs_m[:, None] * sqs + offs_d[None, :] * sqd,
                mask=(offs_m[:, None] < S) & d_ok[None, :], other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, BD), tl.float32)
    hi = tl.minimum((start_m + 1) * BM, S)
    for start_n in range(0, hi, BN):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * sks + offs_d[:, None] * skd,
                    mask=(cols[None, :] < S) & d_ok[:, None], other=0.0)
        qk = tl.dot(q, k, input_precision=PRECISION)
        visible = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
        qk = tl.where(visible, qk * qk_scale, -float("inf"))
        # Column 0 is visible to every row, so m_new is finite from the first block on.
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + cols[:, None] * svs + offs_d[None, :] * svd,
                    mask=(cols[:, None] < S) & d_ok[None, :], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * sos + offs_d[None, :] * sod, out.to(o_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < S) & d_ok[None, :])


def kernel_fn(Q, K, V):
    if not (Q.is_cuda and K.is_cuda and V.is_cuda):
        raise ValueError("the Triton flash_attention starter needs CUDA tensors")
    B, H, S, D = Q.shape
    O = torch.empty_like(Q)
    wide = Q.element_size() == 4
    bn = max(16, BLOCK_N // 2) if wide else BLOCK_N
    bd = max(16, triton.next_power_of_2(D))
    qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634   # exp(x) = exp2(x * log2(e))
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _attn_fwd[grid](Q, K, V, O, *Q.stride(), *K.stride(), *V.stride(), *O.stride(), H, S, D, qk_scale,
                    BM=BLOCK_M, BN=bn, BD=bd, PRECISION="ieee" if wide else "tf32",
                    num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return O
