"""Triton starter: gelu, tanh approximation, written as x * sigmoid(2u) = x / (1 + exp(-2u)) with
u = sqrt(2/pi) (x + 0.044715 x^3): no tanh needed and no overflow (exp -> inf gives -0).
One BLOCK_SIZE-wide slice per program, math in fp32. CONTRACT's approximate "none" (exact GELU,
F.gelu's default) computes 0.5 x (1 + erf(x / sqrt(2))) instead (EXACT).

Tunables: BLOCK_SIZE, NUM_WARPS.
"""

import torch
import triton
import triton.language as tl

KERNEL_TYPE = "gelu"

# The contract's attributes (docs/contracts.md): extract writes CONTRACT = {...} after KERNEL_TYPE.
_ATTRS = dict({"approximate": "tanh"}, **globals().get("CONTRACT", {}))
_EXACT = _ATTRS["approximate"] == "none"

BLOCK_SIZE = 1024
NUM_WARPS = 4

TUNE_SPACE = {"BLOCK_SIZE": [256, 512, 1024, 2048, 4096, 8192], "NUM_WARPS": [1, 2, 4, 8, 16]}


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EXACT: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if EXACT:
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    else:
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = x / (1.0 + tl.exp(-2.0 * u))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_fn(x):
    if not x.is_cuda:
        raise ValueError("the Triton gelu starter needs a CUDA tensor")
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    _gelu_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, n, BLOCK=BLOCK_SIZE, EXACT=_EXACT,
                                                 num_warps=NUM_WARPS)
    return y
