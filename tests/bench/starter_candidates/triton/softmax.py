"""Triton starter: softmax over the last dimension.

Rows up to MAX_FUSED_COLS wide are held whole in registers (one read, one write per element);
wider rows use an online max/sum over CHUNK-wide pieces and a second pass to write.
Tunables: NUM_WARPS for the whole-row kernel, MAX_FUSED_COLS, CHUNK and ONLINE_WARPS for the
chunked kernel.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "softmax"

NUM_WARPS = 8
MAX_FUSED_COLS = 16384
CHUNK = 4096
ONLINE_WARPS = 8

TUNE_SPACE = {"NUM_WARPS": [2, 4, 8, 16, 32], "MAX_FUSED_COLS": [4096, 8192, 16384, 32768],
              "CHUNK": [1024, 2048, 4096, 8192], "ONLINE_WARPS": [4, 8, 16]}


@triton.jit
def _softmax_row_kernel(x_ptr, y_ptr, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=-float("inf"),
                eviction_policy="evict_first").to(tl.float32)
    e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)   # exp(x) = exp2(x * log2(e))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, stride_x, stride_y, n_cols, CH: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, CH)
    m = tl.full((CH,), -float("inf"), tl.float32)     # running max per lane
    s = tl.zeros((CH,), tl.float32)                   # running sum of exp(x - m) per lane
    for start in range(0, n_cols, CH):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)   # lanes that saw only padding
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    m_row = tl.max(m, axis=0)
    inv = 1.0 / tl.sum(s * tl.exp(m - m_row), axis=0)
    for start in range(0, n_cols, CH):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x - m_row) * inv).to(y_ptr.dtype.element_ty), mask=cols < n_cols)


def kernel_fn(x):
    if not x.is_cuda:
        raise ValueError("the Triton softmax starter needs a CUDA tensor")
    x = x.contiguous()
    rows, cols = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    if block <= MAX_FUSED_COLS:
        _softmax_row_kernel[(rows,)](x, y, x.stride(0), y.stride(0), cols, BLOCK=block,
                                     num_warps=NUM_WARPS)
    else:
        _softmax_online_kernel[(rows,)](x, y, x.stride(0), y.stride(0), cols, CH=CHUNK,
                                        num_warps=ONLINE_WARPS)
    return y
