"""Triton starter: the residual add and the layernorm of its sum in one pass (h = x + residual;
y = (h - mean) * rsqrt(var + eps) * w (+ b)), statistics in fp32; eps and bias (present or not:
kernel_fn(x, residual, weight) without one) from CONTRACT. Returns out[2, M, N]: out[0] = h, out[1] = y.

One read of x and residual, one write of h and of y. The norm reads h rounded to the output dtype, as
the model's own norm does. Rows up to MAX_FUSED_COLS wide stay in registers (ROWS_PER_PROG rows per
program: ViT's 768-wide rows waste lanes one at a time); wider rows: pass 1 writes h and sums h and
h^2 in fp32 CHUNK columns at a time (var = E[h^2] - mean^2, clamped at 0), pass 2 re-reads h from L2.
Tunables: NUM_WARPS, MAX_FUSED_COLS, ROWS_PER_PROG, CHUNK, CHUNK_WARPS.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "add_layernorm"

NUM_WARPS = 4
MAX_FUSED_COLS = 8192
ROWS_PER_PROG = 2
CHUNK = 4096
CHUNK_WARPS = 16

TUNE_SPACE = {"NUM_WARPS": [2, 4, 8, 16], "MAX_FUSED_COLS": [4096, 8192, 16384],
              "ROWS_PER_PROG": [1, 2, 4, 8], "CHUNK": [1024, 2048, 4096], "CHUNK_WARPS": [4, 8, 16]}

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"eps": 1e-5, "bias": True}, **globals().get("CONTRACT", {}))
_EPS = float(_ATTRS["eps"])
_BIAS = bool(_ATTRS["bias"])


@triton.jit
def _add_layernorm_rows(x_ptr, r_ptr, w_ptr, b_ptr, h_ptr, y_ptr, n_rows, n_cols, eps,
                        BLOCK: tl.constexpr, ROWS: tl.constexpr, HAS_BIAS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    rows = pid * ROWS + tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    cmask = cols < n_cols
    mask = (rows < n_rows) & cmask
    offs = rows * n_cols + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    h = (x + r).to(h_ptr.dtype.element_ty)
    tl.store(h_ptr + offs, h, mask=mask)
    hf = h.to(tl.float32)
    mean = tl.sum(hf, axis=1) / n_cols
    d = tl.where(cmask, hf - mean[:, None], 0.0)
    rstd = tl.math.rsqrt(tl.sum(d * d, axis=1) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    y = d * rstd[:, None] * w
    if HAS_BIAS:
        y += tl.load(b_ptr + cols, mask=cmask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_layernorm_looped(x_ptr, r_ptr, w_ptr, b_ptr, h_ptr, y_ptr, n_cols, eps, CH: tl.constexpr,
                          HAS_BIAS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    offs = tl.arange(0, CH)
    s1 = tl.zeros((CH,), tl.float32)
    s2 = tl.zeros((CH,), tl.float32)
    for start in range(0, n_cols, CH):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        r = tl.load(r_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        h = (x + r).to(h_ptr.dtype.element_ty)
        tl.store(h_ptr + base + cols, h, mask=mask, eviction_policy="evict_last")
        hf = h.to(tl.float32)
        s1 += hf
        s2 += hf * hf
    mean = tl.sum(s1, axis=0) / n_cols
    var = tl.maximum(tl.sum(s2, axis=0) / n_cols - mean * mean, 0.0)
    rstd = tl.math.rsqrt(var + eps)
    tl.debug_barrier()      # pass 2 re-reads h that other threads of this program wrote
    for start in range(0, n_cols, CH):
        cols = start + offs
        mask = cols < n_cols
        hf = tl.load(h_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        y = (hf - mean) * rstd * w
        if HAS_BIAS:
            y += tl.load(b_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_fn(x, residual, weight, bias=None):
    if not x.is_cuda:
        raise ValueError("the Triton add_layernorm starter needs CUDA tensors")
    if _BIAS != (bias is not None):
        raise ValueError("the contract says bias %s, kernel_fn got %s" % (_BIAS, "one" if bias is not None else "none"))
    x, residual, weight = x.contiguous(), residual.contiguous(), weight.contiguous()
    b = bias.contiguous() if bias is not None else weight      # never read without HAS_BIAS
    rows, cols = x.shape
    out = torch.empty((2, rows, cols), dtype=x.dtype, device=x.device)
    if rows == 0 or cols == 0:
        return out
    h, y = out[0], out[1]
    block = triton.next_power_of_2(cols)
    if block <= MAX_FUSED_COLS:
        per = max(1, min(ROWS_PER_PROG, triton.next_power_of_2(rows)))
        _add_layernorm_rows[(triton.cdiv(rows, per),)](x, residual, weight, b, h, y, rows, cols, _EPS,
                                                       BLOCK=block, ROWS=per, HAS_BIAS=_BIAS, num_warps=NUM_WARPS)
    else:
        _add_layernorm_looped[(rows,)](x, residual, weight, b, h, y, cols, _EPS, CH=CHUNK, HAS_BIAS=_BIAS,
                                       num_warps=CHUNK_WARPS)
    return out
