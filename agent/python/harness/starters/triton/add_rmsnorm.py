"""Triton starter: the residual add and the rmsnorm of its sum in one pass (h = x + residual;
y = h * rsqrt(mean(h^2) + eps) * (offset + w)), sum of squares in fp32; eps and the weight offset
from CONTRACT. Returns out[2, M, N]: out[0] = h, out[1] = y.

One read of x and residual, one write of h and of y (4 MN elements moved, against 6 MN for the
add and the norm apart). The norm reads h rounded to the output dtype, as the model's own norm does.
- rows up to MAX_FUSED_COLS wide stay in registers, ROWS_PER_PROG rows per program (narrow rows,
  ViT's 768, waste lanes otherwise), NUM_WARPS warps;
- wider rows: pass 1 writes h CHUNK columns at a time and sums h^2, pass 2 re-reads h (still in L2)
  and writes y.
Tunables: NUM_WARPS, MAX_FUSED_COLS, ROWS_PER_PROG, CHUNK, CHUNK_WARPS.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "add_rmsnorm"

NUM_WARPS = 8
MAX_FUSED_COLS = 8192
ROWS_PER_PROG = 1
CHUNK = 4096
CHUNK_WARPS = 16

TUNE_SPACE = {"NUM_WARPS": [2, 4, 8, 16], "MAX_FUSED_COLS": [4096, 8192, 16384],
              "ROWS_PER_PROG": [1, 2, 4], "CHUNK": [1024, 2048, 4096], "CHUNK_WARPS": [4, 8, 16]}

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"eps": 1e-6, "offset": 0.0}, **globals().get("CONTRACT", {}))
_EPS = float(_ATTRS["eps"])
_OFFSET = float(_ATTRS["offset"]) != 0.0      # the contract allows offset 0 or 1


@triton.jit
def _add_rmsnorm_rows(x_ptr, r_ptr, w_ptr, h_ptr, y_ptr, n_rows, n_cols, eps,
                      BLOCK: tl.constexpr, ROWS: tl.constexpr, OFFSET: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    rows = pid * ROWS + tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    mask = (rows < n_rows) & (cols < n_cols)
    offs = rows * n_cols + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    h = (x + r).to(h_ptr.dtype.element_ty)
    tl.store(h_ptr + offs, h, mask=mask)
    hf = h.to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(hf * hf, axis=1) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0, eviction_policy="evict_last").to(tl.float32)
    if OFFSET:
        w = w + 1.0
    tl.store(y_ptr + offs, (hf * rstd[:, None] * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_rmsnorm_looped(x_ptr, r_ptr, w_ptr, h_ptr, y_ptr, n_cols, eps, CH: tl.constexpr, OFFSET: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    offs = tl.arange(0, CH)
    acc = tl.zeros((CH,), tl.float32)
    for start in range(0, n_cols, CH):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        r = tl.load(r_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        h = (x + r).to(h_ptr.dtype.element_ty)
        tl.store(h_ptr + base + cols, h, mask=mask, eviction_policy="evict_last")
        hf = h.to(tl.float32)
        acc += hf * hf
    rstd = tl.math.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    tl.debug_barrier()      # pass 2 re-reads h that other threads of this program wrote
    for start in range(0, n_cols, CH):
        cols = start + offs
        mask = cols < n_cols
        hf = tl.load(h_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        if OFFSET:
            w = w + 1.0
        tl.store(y_ptr + base + cols, (hf * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def kernel_fn(x, residual, weight):
    if not x.is_cuda:
        raise ValueError("the Triton add_rmsnorm starter needs CUDA tensors")
    x, residual, weight = x.contiguous(), residual.contiguous(), weight.contiguous()
    rows, cols = x.shape
    out = torch.empty((2, rows, cols), dtype=x.dtype, device=x.device)
    if rows == 0 or cols == 0:
        return out
    h, y = out[0], out[1]
    block = triton.next_power_of_2(cols)
    if block <= MAX_FUSED_COLS:
        per = max(1, min(ROWS_PER_PROG, triton.next_power_of_2(rows)))
        _add_rmsnorm_rows[(triton.cdiv(rows, per),)](x, residual, weight, h, y, rows, cols, _EPS,
                                                     BLOCK=block, ROWS=per, OFFSET=_OFFSET, num_warps=NUM_WARPS)
    else:
        _add_rmsnorm_looped[(rows,)](x, residual, weight, h, y, cols, _EPS, CH=CHUNK, OFFSET=_OFFSET,
                                     num_warps=CHUNK_WARPS)
    return out
