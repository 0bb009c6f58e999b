"""Triton starter: interleaved rotary embedding. x is viewed as [B*H*S, D] rows; each program
rotates ROWS rows. Rows are loaded and stored contiguously ([ROWS, D]); the pairs
(x[2i], x[2i+1]) are separated in registers with reshape + split and rotated by cos/sin[s, i]
in fp32. CONTRACT's layout "neox" (transformers' rotate_half) rotates the halves (x[i], x[i + D/2])
instead: _rotary_neox_kernel loads and stores each half as its own [ROWS, D/2] block. cos/sin are
[S, D/2] either way.

Tunables: ROWS per program, NUM_WARPS.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "rotary_embedding"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"layout": "interleaved"}, **globals().get("CONTRACT", {}))
_NEOX = _ATTRS["layout"] == "neox"

ROWS = 16
NUM_WARPS = 4

TUNE_SPACE = {"ROWS": [1, 2, 4, 8, 16, 32, 64], "NUM_WARPS": [1, 2, 4, 8]}


@triton.jit
def _rotary_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, n_rows, S, HALF,
                   R: tl.constexpr, BLOCK_HALF: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    row_ok = rows < n_rows
    d = tl.arange(0, 2 * BLOCK_HALF)
    mask = row_ok[:, None] & (d[None, :] < 2 * HALF)
    offs = rows.to(tl.int64)[:, None] * (2 * HALF) + d[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    x0, x1 = tl.split(tl.reshape(x, (R, BLOCK_HALF, 2)))
    half = tl.arange(0, BLOCK_HALF)
    tmask = row_ok[:, None] & (half[None, :] < HALF)
    tab = (rows % S).to(tl.int64)[:, None] * HALF + half[None, :]
    c = tl.load(cos_ptr + tab, mask=tmask, other=0.0).to(tl.float32)
    s = tl.load(sin_ptr + tab, mask=tmask, other=0.0).to(tl.float32)
    y = tl.reshape(tl.join(x0 * c - x1 * s, x0 * s + x1 * c), (R, 2 * BLOCK_HALF))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rotary_neox_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, n_rows, S, HALF,
                        R: tl.constexpr, BLOCK_HALF: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    half = tl.arange(0, BLOCK_HALF)
    mask = (rows < n_rows)[:, None] & (half[None, :] < HALF)
    offs = rows.to(tl.int64)[:, None] * (2 * HALF) + half[None, :]
    x1 = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + offs + HALF, mask=mask, other=0.0).to(tl.float32)
    tab = (rows % S).to(tl.int64)[:, None] * HALF + half[None, :]
    c = tl.load(cos_ptr + tab, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(sin_ptr + tab, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x1 * c - x2 * s).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + offs + HALF, (x2 * c + x1 * s).to(y_ptr.dtype.element_ty), mask=mask)


def kernel_fn(x, cos, sin):
    if not x.is_cuda:
        raise ValueError("the Triton rotary_embedding starter needs CUDA tensors")
    x, cos, sin = x.contiguous(), cos.contiguous(), sin.contiguous()
    B, H, S, D = x.shape
    y = torch.empty_like(x)
    n_rows = B * H * S
    half = D // 2
    grid = (triton.cdiv(n_rows, ROWS),)
    if _NEOX:
        _rotary_neox_kernel[grid](x, cos, sin, y, n_rows, S, half, R=ROWS,
                                  BLOCK_HALF=triton.next_power_of_2(half), num_warps=NUM_WARPS)
        return y
    _rotary_kernel[grid](x, cos, sin, y, n_rows, S, half, R=ROWS,
                         BLOCK_HALF=triton.next_power_of_2(half), num_warps=NUM_WARPS)
    return y
