"""Triton starter: cross-entropy (mean), one row per program: an online log-sum-exp over
CHUNK-wide pieces (one read of the logits, one exp2 per logit), minus the target's logit; per-row
losses in fp32, averaged by torch (a fixed-order, deterministic reduction).

Tunables: CHUNK, NUM_WARPS. Defaults measured best on an H100 (bf16, 8192x128256: 2885 GB/s,
3.8x PyTorch's eager; docs/benchmarks.md).
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "cross_entropy"

CHUNK = 4096
NUM_WARPS = 4

TUNE_SPACE = {"CHUNK": [512, 1024, 2048, 4096, 8192], "NUM_WARPS": [2, 4, 8, 16]}


@triton.jit
def _ce_row_kernel(logits_ptr, targets_ptr, loss_ptr, stride_row, n_cols, CH: tl.constexpr):
    # In log2 units (exp2 is the hardware's): one exp2 per logit; the running maximum is one number
    # per row, raised a chunk at a time, so rescaling costs one exp2 per chunk, not per lane.
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride_row
    offs = tl.arange(0, CH)
    m = tl.max(tl.full((CH,), -float("inf"), tl.float32), axis=0)   # a scalar tensor: loop-carried
    s = tl.zeros((CH,), tl.float32)
    for start in range(0, n_cols, CH):
        cols = start + offs
        x = tl.load(base + cols, mask=cols < n_cols, other=-float("inf"),
                    eviction_policy="evict_first").to(tl.float32) * 1.4426950408889634
        m_new = tl.maximum(m, tl.max(x, axis=0))   # finite: every chunk holds a real logit
        s = s * tl.exp2(m - m_new) + tl.exp2(x - m_new)
        m = m_new
    lse = (m + tl.log2(tl.sum(s, axis=0))) * 0.6931471805599453
    target = tl.load(targets_ptr + row)
    picked = tl.load(base + target).to(tl.float32)
    tl.store(loss_ptr + row, lse - picked)


def kernel_fn(logits, targets):
    if not logits.is_cuda:
        raise ValueError("the Triton cross_entropy starter needs CUDA tensors")
    logits, targets = logits.contiguous(), targets.contiguous()
    rows, cols = logits.shape
    losses = torch.empty((rows,), device=logits.device, dtype=torch.float32)
    _ce_row_kernel[(rows,)](logits, targets, losses, logits.stride(0), cols, CH=CHUNK,
                            num_warps=NUM_WARPS)
    return losses.mean().to(logits.dtype)
