"""Triton starter: layernorm, one row per program, statistics in fp32; eps and bias (present or not:
kernel_fn(x, weight) without one, HAS_BIAS) from CONTRACT (defaults 1e-5 and true).

Rows up to MAX_FUSED_COLS wide stay in registers (one read, one write); wider rows take three
CHUNK-wide passes (mean, variance, normalise), the first two leaving the row in L2 for the next
(evict_last), the last streaming it out (evict_first). The weights and bias are read by every row
and kept in L2 (evict_last), loaded after the statistics so they hold no registers meanwhile. Rows
whose width is the block's are loaded and stored without masks (EVEN).
Tunables: NUM_WARPS, MAX_FUSED_COLS, CHUNK.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "layernorm"

NUM_WARPS = 8
MAX_FUSED_COLS = 16384
CHUNK = 4096

TUNE_SPACE = {"NUM_WARPS": [2, 4, 8, 16, 32], "MAX_FUSED_COLS": [4096, 8192, 16384, 32768],
              "CHUNK": [1024, 2048, 4096, 8192]}

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"eps": 1e-5, "bias": True}, **globals().get("CONTRACT", {}))
_EPS = float(_ATTRS["eps"])


@triton.jit
def _layernorm_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, stride_x, stride_y, n_cols, eps,
                          BLOCK: tl.constexpr, EVEN: tl.constexpr, HAS_BIAS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    if EVEN:
        x = tl.load(x_ptr + row * stride_x + offs).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        xc = x - mean
    else:
        x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = tl.math.rsqrt(var + eps)
    if EVEN:
        w = tl.load(w_ptr + offs, eviction_policy="evict_last").to(tl.float32)
        if HAS_BIAS:
            b = tl.load(b_ptr + offs, eviction_policy="evict_last").to(tl.float32)
            tl.store(y_ptr + row * stride_y + offs, (xc * rstd * w + b).to(y_ptr.dtype.element_ty))
        else:
            tl.store(y_ptr + row * stride_y + offs, (xc * rstd * w).to(y_ptr.dtype.element_ty))
    else:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        if HAS_BIAS:
            b = tl.load(b_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            tl.store(y_ptr + row * stride_y + offs, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
        else:
            tl.store(y_ptr + row * stride_y + offs, (xc * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _layernorm_chunked_kernel(x_ptr, w_ptr, b_ptr, y_ptr, stride_x, stride_y, n_cols, eps,
                              CH: tl.constexpr, HAS_BIAS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    offs = tl.arange(0, CH)
    acc = tl.zeros((CH,), tl.float32)
    for start in range(0, n_cols, CH):
        cols = start + offs
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0, eviction_policy="evict_last").to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros((CH,), tl.float32)
    for start in range(0, n_cols, CH):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0, eviction_policy="evict_last").to(tl.float32)
        d = tl.where(cols < n_cols, x - mean, 0.0)
        acc += d * d
    rstd = tl.math.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, CH):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        if HAS_BIAS:
            b = tl.load(b_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            tl.store(y_ptr + row * stride_y + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty),
                     mask=mask)
        else:
            tl.store(y_ptr + row * stride_y + cols, ((x - mean) * rstd * w).to(y_ptr.dtype.element_ty),
                     mask=mask)


def kernel_fn(x, weight, bias=None):
    if not x.is_cuda:
        raise ValueError("the Triton layernorm starter needs CUDA tensors")
    has_bias = bias is not None
    x, weight = x.contiguous(), weight.contiguous()
    bias = bias.contiguous() if has_bias else weight      # never read without HAS_BIAS
    rows, cols = x.shape
    y = torch.empty_like(x)
    if rows == 0 or cols == 0:
        return y
    block = triton.next_power_of_2(cols)
    if block <= MAX_FUSED_COLS:
        _layernorm_row_kernel[(rows,)](x, weight, bias, y, x.stride(0), y.stride(0), cols, _EPS,
                                       BLOCK=block, EVEN=block == cols, HAS_BIAS=has_bias, num_warps=NUM_WARPS)
    else:
        _layernorm_chunked_kernel[(rows,)](x, weight, bias, y, x.stride(0), y.stride(0), cols, _EPS,
                                           CH=CHUNK, HAS_BIAS=has_bias, num_warps=NUM_WARPS)
    return y
