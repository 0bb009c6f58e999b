"""Registry of op types. Importing this package needs no torch."""

from . import (add_layernorm, add_rmsnorm, bmm, cross_entropy, flash_attention, fused_mlp, gelu, layernorm, matmul,
               reduce, rmsnorm, rotary_embedding, silu, softmax)

_MODULES = (matmul, softmax, layernorm, rmsnorm, flash_attention, fused_mlp, cross_entropy,
            rotary_embedding, reduce, gelu, silu, add_rmsnorm, add_layernorm, bmm)

OPS = {m.SPEC.name: m.SPEC for m in _MODULES}

# Names other tools use for the same op (AutoKernel, profiler classification).
ALIASES = {"attention": "flash_attention", "sdpa": "flash_attention", "rotary": "rotary_embedding",
           "rope": "rotary_embedding", "swiglu": "fused_mlp", "mlp": "fused_mlp",
           "layer_norm": "layernorm", "rms_norm": "rmsnorm", "sum": "reduce", "mm": "matmul",
           "gemm": "matmul", "crossentropy": "cross_entropy",
           "batched_matmul": "bmm", "batch_matmul": "bmm"}


def get(name):
    """OpSpec for a KERNEL_TYPE; raises KeyError with the known names."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in OPS:
        raise KeyError("unknown KERNEL_TYPE %r (known: %s)" % (name, ", ".join(sorted(OPS))))
    return OPS[key]
