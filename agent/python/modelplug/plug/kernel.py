"""A kernel as the plug sees it: its function, op type, dtype, contract attributes, the sites it is to
run at, and the counters verify reads (routed calls, fallbacks with their reasons). Also the shared
per-thread state (is a kernel running now? is torch.compile tracing?) and the cheap argument checks
every adapter uses."""

import threading

import torch

try:
    from torch.overrides import TorchFunctionMode
except ImportError:  # torch < 1.13
    TorchFunctionMode = None

FUNCTION_OPS = {
    "softmax": ("softmax",),
    "layernorm": ("layer_norm",),
    "flash_attention": ("scaled_dot_product_attention",),
    "cross_entropy": ("cross_entropy",),
    "gelu": ("gelu",),
    "silu": ("silu",),
    "reduce": ("sum",),
    "matmul": ("linear", "matmul", "__matmul__", "mm", "addmm"),
    "bmm": ("matmul", "__matmul__", "bmm"),
}
MODULE_OPS = ("rmsnorm", "fused_mlp", "rotary_embedding")
RMSNORM_EPS = 1e-6          # the default rmsnorm contract (a kernel without CONTRACT)
LAYERNORM_EPS = 1e-5        # the default layernorm contract
# The contract attributes every kernel without a CONTRACT had (docs/contracts.md, defaults first).
DEFAULT_ATTRS = {
    "rmsnorm": {"eps": RMSNORM_EPS, "offset": 0.0},
    "layernorm": {"eps": LAYERNORM_EPS, "bias": True},
    "flash_attention": {"causal": True, "scale": None, "kv_heads": None},
    "matmul": {"bias": False, "activation": "none"},
    "bmm": {"b_transposed": False},
    "gelu": {"approximate": "tanh"},
    "rotary_embedding": {"layout": "interleaved"},
}
_CONTRACT_META = ("op_type", "callable", "dtype", "sites", "refused")
MLP_NAMES = (("w_gate", "w_up", "w_down"), ("gate_proj", "up_proj", "down_proj"), ("w1", "w3", "w2"))

_state = threading.local()


_COMPILER = getattr(torch, "compiler", None)     # looked up once: _compiling() runs on every plugged call
FROZEN_WT = "_autokernel_weight_t"              # a frozen plug's W^T buffer on a plugged nn.Linear


def _compiling():
    """True while torch.compile traces: the plugs must then be plain tensor code (no thread-locals, no
    id()-keyed caches), or Dynamo guards on them and recompiles for every weight."""
    return bool(_COMPILER is not None and hasattr(_COMPILER, "is_compiling") and _COMPILER.is_compiling())


def _in_kernel():
    if _compiling():
        return False        # a compiled graph calls kernels as opaque custom ops: nothing to re-route
    return getattr(_state, "depth", 0) > 0


def contract_of(module):
    """The kernel module's CONTRACT dict, or None (a kernel from before contracts)."""
    c = getattr(module, "CONTRACT", None)
    return dict(c) if isinstance(c, dict) else None


def _same(a, b, rel=1e-12):
    """Two floats equal within `rel` relative (None equals only None)."""
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    return abs(a - b) <= rel * max(abs(a), abs(b))


class Kernel:
    """One kernel: its function, op type, dtype, contract and the module names where it is to run.

    contract: the kernel module's CONTRACT (the attributes, as extract writes them; or the folder's
    whole contract object {"op_type", "callable", "attrs", ...}), or None: DEFAULT_ATTRS, the contract
    of every kernel from before contracts. callable: the folder's contract's callable
    ("function:pkg.mod.apply_rotary_pos_emb") when CONTRACT does not carry it."""

    def __init__(self, name, op_type, fn, sites, dtype=None, call=None, contract=None, callable=None):
        self.name, self.op_type, self.fn, self.sites = name, op_type, fn, list(sites)
        self.dtype = dtype                  # torch dtype the kernel was judged in (None: any)
        self.call = call or fn              # what adapters call: fn, or a torch.library custom op
        self.contract = dict(contract) if isinstance(contract, dict) else None
        self.contracted = self.contract is not None
        self.attrs = dict(DEFAULT_ATTRS.get(op_type, {}))
        if self.contract:
            given = self.contract.get("attrs")
            if not isinstance(given, dict):
                given = {k: v for k, v in self.contract.items() if k not in _CONTRACT_META}
            self.attrs.update(given)
        self.callable = callable or (self.contract or {}).get("callable") or ""
        self.routed = 0
        self.fallbacks = {}                 # reason -> count
        self.others = {}                    # reason -> count: calls another folder's contract takes
        self.plugged_sites = []
        self.unplugged = {}                 # site -> reason
        self.call_note = ""                 # how a compiled model calls it (as_custom_ops), "" in eager

    def fallback(self, reason):
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        return None

    def report(self):
        out = {"kernel": self.name, "op_type": self.op_type, "attrs": dict(self.attrs),
               "plugged_sites": list(self.plugged_sites),
               "unplugged_sites": dict(self.unplugged), "routed_calls": self.routed,
               "fallback_calls": dict(self.fallbacks)}
        if self.others:
            out["other_calls"] = dict(self.others)
        if self.call_note:
            out["call"] = self.call_note
        return out

    def run(self, *args):
        return self.call(*args) if _compiling() else launch(self, *args)


def launch(kernel, *args):
    """kernel's call, counted as routed; while it runs a site's function routes leave its own torch calls
    alone (the thread's kernel depth, _in_kernel). The swapped forwards (swap.py) call it directly, past
    their own compile check."""
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    try:
        out = kernel.call(*args)
    finally:
        _state.depth = depth
    kernel.routed += 1
    return out


def _rows(x):
    return x.reshape(-1, x.shape[-1])


def _fits(kernel, *tensors):
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            return "an argument is not a tensor"
        if kernel.dtype is not None and t.is_floating_point() and t.dtype != kernel.dtype:
            return "dtype %s, the kernel was judged in %s" % (str(t.dtype)[6:], str(kernel.dtype)[6:])
    return None


def load_kernel(path, name):
    """Imports a kernel.py under a unique module name; returns (module, KERNEL_TYPE)."""
    import importlib.util
    import sys
    mod_name = "_ak_plug_%s" % "".join(c if c.isalnum() else "_" for c in name)
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module          # Triton's @jit needs the module importable by name
    spec.loader.exec_module(module)
    return module, getattr(module, "KERNEL_TYPE", None)


def op_name(name):
    """The torch.library name of kernel folder `name`: an identifier (folders start with a digit,
    "03-rmsnorm", which the schema parser refuses: "expected ident but found 'number'")."""
    return "autokernel::k_%s" % "".join(c if c.isalnum() else "_" for c in name)
