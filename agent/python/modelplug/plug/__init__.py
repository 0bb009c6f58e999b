"""Plugging kernels into a model at the call sites the profiler recorded, and taking them out again.

Standalone on purpose: this package depends on torch and the standard library only (relative imports
between its files), so that an exported package (autokernel-cli export) carries it verbatim as `_plug/`
and a user's code gets exactly what verify measured.

A kernel is a kernel.py module (KERNEL_TYPE, kernel_fn) plus the qualified names of the modules it
ran in ("blocks.3.attn"). Two ways in:

- module level: the module *is* the op (nn.Linear for matmul; an RMSNorm class; a SwiGLU MLP; a
  rotary module holding its cos/sin tables): its forward is replaced for this instance;
- function level: the op is a torch function called inside the module (F.softmax, F.layer_norm,
  F.scaled_dot_product_attention, F.cross_entropy, F.gelu, F.silu, torch.sum, torch.matmul): while
  the module runs, a TorchFunctionMode routes that function to the kernel.

A kernel's contract is its module's `CONTRACT` dict (docs/contracts.md: op type, callable, attrs):
a call routes only when its own arguments equal the contract's attributes (eps, weight offset, bias
present, causal, scale, K/V heads, approximate GELU, rotary layout). A kernel without CONTRACT has
the defaults, the contract every earlier kernel had (DEFAULT_ATTRS). A NeoX rotary (rotate_half) is
plugged at function level: the model's own apply_rotary_pos_emb, named by the contract's callable,
is replaced in its Python module while plugged, and routes only while a call-site module runs.

Every call whose arguments do not fit the kernel's contract (another dtype, a non-causal mask, an
eps the kernel does not implement) falls back to PyTorch and is counted, so the report says what
really ran. Nothing is skipped silently: a kernel that cannot be plugged says why.

Where things are (read in this order):

  kernel.py     Kernel (function, op type, contract attributes, routed/fallback counters), load_kernel
  plugged.py    Plugged: puts kernels into a model site by site, restore() takes them out again
  modules.py    module-level plugs (nn.Linear, RMSNorm-like, SwiGLU MLP, rotary tables) and the
                plug-time checks that a norm module computes what the contract says
  functions.py  function-level adapters (softmax, layer_norm, SDPA, linear/matmul, bmm, ...) and the
                TorchFunctionMode that routes a site's torch functions to them
  fused.py      a Linear + activation kernel: the model's own activation of its output taken out
  rotary.py     the NeoX rotary, plugged through the model's own apply_rotary_pos_emb
  regions.py    a residual add and the norm reading its sum as one kernel
  customops.py  kernels as torch.library custom ops with fake implementations (torch.compile)
"""

from .kernel import (DEFAULT_ATTRS, FUNCTION_OPS, LAYERNORM_EPS, MLP_NAMES, MODULE_OPS, RMSNORM_EPS,  # noqa: F401
                     Kernel, TorchFunctionMode, _compiling, _fits, _in_kernel, _rows, _same, contract_of,
                     load_kernel, op_name)
from .functions import ADAPTERS, b_transposed  # noqa: F401
from .fused import ACTIVATION_FAMILY  # noqa: F401
from .modules import (EPS_ATTRS, FROZEN_WT, layernorm_mismatch, module_eps,  # noqa: F401
                      rmsnorm_mismatch)
from .rotary import ROTARY_FUNCTION  # noqa: F401
from .regions import REGION_OPS, region_site  # noqa: F401
from .customops import (FAKE_SHAPES, arity, as_custom_ops, custom_op, custom_op_api,  # noqa: F401
                        fake_shape)
from .plugged import Plugged  # noqa: F401
