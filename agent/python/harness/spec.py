"""OpSpec: everything the harness knows about one op type (reference, inputs, sizes, formulas).

Sizes are dicts of named dimensions ({"rows": 4096, "cols": 4096}); kernel files may give them as
dicts, as (label, dict) pairs (AutoKernel's form) or as lists of ints in the order of `dims`.
"""

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

DTYPE_NAMES = ("float32", "bfloat16", "float16")

# Magnitudes of the hostile distributions. fp16 saturates at 65504, so "large" stays where a
# correct kernel (one that computes in fp32 internally) cannot overflow.
DEFAULT_LARGE = {"float16": 300.0, "bfloat16": 1e4, "float32": 1e4}
DEFAULT_TINY = {"float16": 1e-3, "bfloat16": 1e-6, "float32": 1e-6}


def tol(fp32, fp16, bf16, bf16_rtol=None):
    """Tolerances per dtype name, atol = rtol unless bf16_rtol differs."""
    return {
        "float32": {"atol": fp32, "rtol": fp32},
        "float16": {"atol": fp16, "rtol": fp16},
        "bfloat16": {"atol": bf16, "rtol": bf16 if bf16_rtol is None else bf16_rtol},
    }


@dataclass(frozen=True)
class OpSpec:
    name: str
    summary: str
    args: Tuple[str, ...]            # kernel_fn's arguments, in order
    arg_shapes: Tuple[str, ...]      # human text per argument, e.g. "x[rows, cols]"
    output: str                      # human text for the result
    dims: Tuple[str, ...]            # named size dimensions
    reference: Callable              # reference(*inputs) -> tensor, eager PyTorch, native dtype
    make_inputs: Callable            # make_inputs(size, dtype, device, gen, dist, scale) -> tuple
    flops: Callable[[Dict[str, int]], float]
    bytes: Callable[[Dict[str, int], int], float]
    flops_text: str
    bytes_text: str
    tolerances: Dict[str, Dict[str, float]]
    sizes: Dict[str, List[Dict[str, int]]]       # "cuda" / "cpu" / "quick": small -> large
    odd_sizes: Dict[str, List[Dict[str, int]]]   # fixed odd sizes per mode
    secret_ranges: Dict[str, Dict[str, Tuple[int, int]]]  # per mode: dim -> (lo, hi) for secret sizes
    headline: Dict[str, Dict[str, int]]           # timing size per mode
    from_shapes: Callable                         # model input shapes (list of lists) -> size
    even_dims: Tuple[str, ...] = ()               # dims that must stay even (rotary's head dim)
    large: Dict[str, float] = field(default_factory=lambda: dict(DEFAULT_LARGE))
    tiny: Dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TINY))
    constraints: str = ""                         # text: what sizes a kernel must accept
    hostile_atol_scale: Dict[str, float] = field(default_factory=dict)  # per hostile distribution
    truth: Callable = None                        # high-precision path when reference can't take fp64

    def ground_truth(self, *inputs):
        return (self.truth or self.reference)(*inputs)

    def size_label(self, size):
        return "x".join(str(size[d]) for d in self.dims)

    def normalize_size(self, raw):
        """One TEST_SIZES entry -> {dim: int}. Raises ValueError naming the problem."""
        if isinstance(raw, (tuple, list)) and len(raw) == 2 and isinstance(raw[0], str) \
                and isinstance(raw[1], dict):
            raw = raw[1]                           # AutoKernel's ("label", {...}) form
        if isinstance(raw, dict):
            missing = [d for d in self.dims if d not in raw]
            if missing:
                raise ValueError("%s size %r lacks %s (dims are %s)"
                                 % (self.name, raw, ", ".join(missing), ", ".join(self.dims)))
            size = {d: raw[d] for d in self.dims}
        elif isinstance(raw, (tuple, list)):
            if len(raw) != len(self.dims):
                raise ValueError("%s size %r has %d numbers, expected %d (%s)"
                                 % (self.name, list(raw), len(raw), len(self.dims), ", ".join(self.dims)))
            size = dict(zip(self.dims, raw))
        else:
            raise ValueError("%s size %r is neither a dict nor a list" % (self.name, raw))
        for d, v in size.items():
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError("%s size %r: %s must be a positive integer" % (self.name, raw, d))
            if d in self.even_dims and v % 2:
                raise ValueError("%s size %r: %s must be even" % (self.name, raw, d))
        return size

    def tolerance(self, dtype_name):
        return dict(self.tolerances.get(dtype_name, self.tolerances["float32"]))

    def describe(self):
        return {
            "summary": self.summary,
            "args": list(self.args),
            "arg_shapes": list(self.arg_shapes),
            "output": self.output,
            "dims": list(self.dims),
            "tolerances": {k: dict(v) for k, v in self.tolerances.items()},
            "test_sizes": {k: [dict(s) for s in v] for k, v in self.sizes.items()},
            "odd_sizes": {k: [dict(s) for s in v] for k, v in self.odd_sizes.items()},
            "secret_size_ranges": {k: {d: list(r) for d, r in v.items()}
                                   for k, v in self.secret_ranges.items()},
            "headline": {k: dict(v) for k, v in self.headline.items()},
            "flops": self.flops_text,
            "bytes": self.bytes_text,
            "hostile_scale": {"large": dict(self.large), "tiny": dict(self.tiny)},
            "constraints": self.constraints,
            "hostile_atol_scale": dict(self.hostile_atol_scale),
        }


def acc(t):
    """Half types computed in fp32; fp32 / fp64 kept (so the fp64 ground truth stays fp64)."""
    import torch
    return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t


def prod(values):
    out = 1
    for v in values:
        out *= int(v)
    return out


def rows_of(shape):
    """Leading dims flattened: [B, T, D] -> B*T."""
    return prod(shape[:-1]) if len(shape) > 1 else 1
