"""Triton starter: rmsnorm x * rsqrt(mean(x^2) + eps) * (offset + w), sum of squares in fp32; eps and
the weight offset (0, or Gemma's 1: OFFSET adds 1 to the weights in registers) from CONTRACT.

Two shapes of kernel, both one row per program:
- rows up to MAX_FUSED_COLS wide stay in registers (one read, one write), NUM_WARPS warps;
- wider rows take Inductor's looped two-pass shape (session 19, measured on the H200): pass 1 reads
  the row CHUNK columns at a time and keeps it in L2 (evict_last), pass 2 re-reads it from there
  (evict_first) with the weights kept (evict_last), CHUNK_WARPS warps. At 8192 columns this is what
  torch.compile's autotuner picks (XBLOCK 1, R0_BLOCK 4096, 16 warps) and it beats the row held in
  registers, whose 8192 fp32 values per program limit how many rows are in flight.
Rows whose width is a multiple of the block (EVEN) are loaded and stored without masks.
Tunables: NUM_WARPS, MAX_FUSED_COLS, CHUNK, CHUNK_WARPS.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "rmsnorm"

NUM_WARPS = 8
MAX_FUSED_COLS = 4096
CHUNK = 4096
CHUNK_WARPS = 16

TUNE_SPACE = {"NUM_WARPS": [2, 4, 8, 16, 32], "MAX_FUSED_COLS": [2048, 4096, 8192, 16384, 32768],
              "CHUNK": [1024, 2048, 4096, 8192], "CHUNK_WARPS": [4, 8, 16, 32]}

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"eps": 1e-6, "offset": 0.0}, **globals().get("CONTRACT", {}))
_EPS = float(_ATTRS["eps"])
_OFFSET = float(_ATTRS["offset"]) != 0.0      # the contract allows offset 0 or 1


@triton.jit
def _rmsnorm_row_kernel(x_ptr, w_ptr, y_ptr, stride_x, stride_y, n_cols, eps,
                        BLOCK: tl.constexpr, EVEN: tl.constexpr, OFFSET: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + row * stride_x + offs).to(tl.float32)
    else:
        x = tl.load(x_ptr + row * stride_x + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    # The weights are read by every row: keep them in L2; loaded after the reduction so they do not
    # hold registers while it runs.
    if EVEN:
        w = tl.load(w_ptr + offs, eviction_policy="evict_last").to(tl.float32)
        if OFFSET:
            w = w + 1.0
        tl.store(y_ptr + row * stride_y + offs, (x * rstd * w).to(y_ptr.dtype.element_ty))
    else:
        w = tl.load(w_ptr + offs, mask=offs < n_cols, other=0.0, eviction_policy="evict_last").to(tl.float32)
        if OFFSET:
            w = w + 1.0
        tl.store(y_ptr + row * stride_y + offs, (x * rstd * w).to(y_ptr.dtype.element_ty),
                 mask=offs < n_cols)


@triton.jit
def _rmsnorm_looped_kernel(x_ptr, w_ptr, y_ptr, stride_x, stride_y, n_cols, eps,
                           CH: tl.constexpr, EVEN: tl.constexpr, UNROLL: tl.constexpr, OFFSET: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, CH)
    acc = tl.zeros((CH,), tl.float32)
    # Pass 1 leaves the row in L2 for pass 2 (a row is at most a few tens of KB; the rows in flight
    # fit the 50 MB L2 of an H100/H200 many times over). UNROLL > 0: the width is UNROLL chunks
    # exactly and the loops are unrolled, as Inductor's are for a width it knows.
    if UNROLL > 0:
        for i in tl.static_range(UNROLL):
            x = tl.load(x_row + i * CH + offs, eviction_policy="evict_last").to(tl.float32)
            acc += x * x
    else:
        for start in range(0, n_cols, CH):
            cols = start + offs
            if EVEN:
                x = tl.load(x_row + cols, eviction_policy="evict_last").to(tl.float32)
            else:
                x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0,
                            eviction_policy="evict_last").to(tl.float32)
            acc += x * x
    rstd = tl.math.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    if UNROLL > 0:
        for i in tl.static_range(UNROLL):
            x = tl.load(x_row + i * CH + offs, eviction_policy="evict_first").to(tl.float32)
            w = tl.load(w_ptr + i * CH + offs, eviction_policy="evict_last").to(tl.float32)
            if OFFSET:
                w = w + 1.0
            tl.store(y_row + i * CH + offs, (x * rstd * w).to(y_ptr.dtype.element_ty))
    else:
        for start in range(0, n_cols, CH):
            cols = start + offs
            if EVEN:
                x = tl.load(x_row + cols, eviction_policy="evict_first").to(tl.float32)
                w = tl.load(w_ptr + cols, eviction_policy="evict_last").to(tl.float32)
                if OFFSET:
                    w = w + 1.0
                tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty))
            else:
                mask = cols < n_cols
                x = tl.load(x_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
                if OFFSET:
                    w = w + 1.0
                tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def kernel_fn(x, weight):
    if not x.is_cuda:
        raise ValueError("the Triton rmsnorm starter needs CUDA tensors")
    x, weight = x.contiguous(), weight.contiguous()
    rows, cols = x.shape
    y = torch.empty_like(x)
    if rows == 0 or cols == 0:
        return y
    block = triton.next_power_of_2(cols)
    if block <= MAX_FUSED_COLS:
        _rmsnorm_row_kernel[(rows,)](x, weight, y, x.stride(0), y.stride(0), cols, _EPS,
                                     BLOCK=block, EVEN=block == cols, OFFSET=_OFFSET, num_warps=NUM_WARPS)
    else:
        even = cols % CHUNK == 0
        # Unrolled for up to 16 chunks: one compile per such width (a model has few), no code bloat.
        unroll = cols // CHUNK if even and cols // CHUNK <= 16 else 0
        _rmsnorm_looped_kernel[(rows,)](x, weight, y, x.stride(0), y.stride(0), cols, _EPS,
                                        CH=CHUNK, EVEN=even, UNROLL=unroll, OFFSET=_OFFSET,
                                        num_warps=CHUNK_WARPS)
    return y
