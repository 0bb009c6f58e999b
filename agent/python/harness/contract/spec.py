"""OpSpec: everything the harness knows about one op type (reference, inputs, sizes, formulas).

Sizes are dicts of named dimensions ({"rows": 4096, "cols": 4096}); kernel files may give them as
dicts, as (label, dict) pairs (AutoKernel's form) or as lists of ints in the order of `dims`.

Contract attributes (docs/contracts.md): an op declares its attributes (`attr_defs`, each with its
default and allowed values) and a `binder`; `spec.bind(attrs)` returns the OpSpec whose reference,
inputs, arguments, text and formulas are those of that contract. `ops.get(name)` is the op bound to
its defaults (the contract every earlier folder had). `spec.contract_from_sites(facts)` maps the
profiler's raw call-site facts to (attrs, refused reason).
"""

import dataclasses
import math
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
    attr_defs: Dict[str, "Attr"] = field(default_factory=dict)   # contract attributes: name -> Attr
    attrs: Dict[str, object] = field(default_factory=dict)       # the bound values (all names)
    binder: Callable = None                       # binder(attrs) -> {field: value} for the bound spec
    sites: Callable = None                        # sites(facts) -> attrs dict (raises Refused)
    # (dtype, dist) of one extra hostile case checked whatever TEST_DTYPES says: for an attribute whose
    # effect is below the resolution of fp16/bf16 outputs (exact vs tanh GELU differ by 4.7e-4).
    contract_probe: Tuple[str, ...] = ()

    def check_attrs(self, attrs):
        """Full, validated attribute dict: defaults for missing names. ValueError names the attribute
        and its allowed values for an unknown name or a bad value."""
        if attrs is None:
            attrs = {}
        if not isinstance(attrs, dict):
            raise ValueError("%s contract attributes must be a dict, not %r" % (self.name, attrs))
        unknown = [k for k in attrs if k not in self.attr_defs]
        if unknown:
            raise ValueError("%s has no contract attribute %s (its attributes: %s)"
                             % (self.name, ", ".join(repr(k) for k in sorted(unknown, key=str)),
                                ", ".join(self.attr_defs) or "none"))
        full = {}
        for name, a in self.attr_defs.items():
            full[name] = a.check(self.name, name, attrs[name]) if name in attrs else a.default
        return full

    def bind(self, attrs=None):
        """This op under a contract: reference, truth, inputs, args, text and formulas reflect attrs."""
        full = self.check_attrs(attrs)
        fields = self.binder(full) if self.binder is not None else {}
        return dataclasses.replace(self, attrs=full, **fields)

    def contract_from_sites(self, facts):
        """(attrs, refused reason) from the profiler's raw call facts (docs/contracts.md). Missing
        facts give the defaults; facts that contradict what the op supports give a reason."""
        return contract_from_sites(self, facts)

    def attrs_defaults(self):
        return {k: a.default for k, a in self.attr_defs.items()}

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
            "attrs": dict(self.attrs),
            "attr_values": {k: a.text for k, a in self.attr_defs.items()},
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


# ---- contract attributes ----------------------------------------------------------------------

class Refused(Exception):
    """A call site's facts contradict what the op supports: the message is shown to the user."""


class Attr:
    """One contract attribute: its default, how a value is checked, the allowed values in words."""

    def __init__(self, default, text, check):
        self.default, self.text, self._check = default, text, check

    def check(self, op, name, value):
        try:
            return self._check(value)
        except (TypeError, ValueError):
            raise ValueError("%s attribute %s = %r is not allowed (allowed: %s)" % (op, name, value, self.text))


def choice(default, *others):
    """One of a few values (numbers compare by value: offset 1 is 1.0; strings by lower case)."""
    values = (default,) + others

    def check(v):
        for allowed in values:
            if isinstance(allowed, bool) or allowed is None:
                if v is allowed:
                    return allowed
            elif isinstance(allowed, str):
                if isinstance(v, str) and v.strip().lower() == allowed:
                    return allowed
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and float(v) == allowed:
                return allowed
        raise ValueError(v)
    return Attr(default, ", ".join(_show(v) for v in values), check)


def positive_float(default):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < float(v) < math.inf):
            raise ValueError(v)
        return float(v)
    return Attr(default, "any float > 0 (default %s)" % _show(default), check)


def optional_float(default=None, what="null or any float > 0"):
    def check(v):
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < float(v) < math.inf):
            raise ValueError(v)
        return float(v)
    return Attr(default, what, check)


def optional_count(default=None, what="null or a positive integer"):
    def check(v):
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(v)
        return int(v)
    return Attr(default, what, check)


def _show(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"%s"' % v
    return repr(v)


class Magnitudes:
    """What inputs.data reads from a spec (hostile magnitudes), for a binder's make_inputs."""

    def __init__(self, large=None, tiny=None):
        self.large = dict(large or DEFAULT_LARGE)
        self.tiny = dict(tiny or DEFAULT_TINY)


def eps_tiny(eps):
    """The "tiny" magnitude of a norm's hostile case: x ~ sqrt(eps), where eps decides the result
    (mean(x^2) ~ eps): an eps 10x off changes outputs of O(1) by 30-60 %, beyond every dtype's
    tolerance, bf16's included."""
    t = math.sqrt(eps)
    return {name: t for name in DTYPE_NAMES}


def call_of(fact):
    """A call_sites entry ({"call": {...}}) or the call facts themselves -> the facts dict."""
    if isinstance(fact, dict) and "call" in fact and "kind" not in fact and isinstance(fact["call"], dict):
        return fact["call"]
    return fact if isinstance(fact, dict) else {}


def fact_args(fact):
    """The call's non-tensor arguments (a function) or plain attributes (a module), or None when the
    profile recorded none (an old profile: the contract's defaults apply)."""
    args = fact.get("args")
    return args if isinstance(args, dict) else None


def fact_tensor(fact, *names):
    """The recorded tensor argument named one of `names` ({"arg", "shape", ...}) or None."""
    for t in fact.get("tensors") or ():
        if isinstance(t, dict) and t.get("arg") in names:
            return t
    return None


_MISSING = object()


def pick(args, *names, default=_MISSING):
    """(True, value) of the first of `names` in args, else (False, default)."""
    for n in names:
        if isinstance(args, dict) and n in args:
            return True, args[n]
    return False, (None if default is _MISSING else default)


def fact_param(fact, name):
    """(True, shape or None) when the module's parameter `name` was recorded, else (False, None)."""
    params = fact.get("params")
    if isinstance(params, dict) and name in params:
        return True, params[name]
    return False, None


def fact_name(fact):
    return "%s %s" % (fact.get("name") or "", fact.get("module_class") or "")


def site_label(fact):
    return fact.get("module") or fact.get("name") or "a call site"


def contract_from_sites(spec, facts):
    """Generic part of OpSpec.contract_from_sites: per site the op's own mapping (spec.sites), then
    the sites must agree; variants (one site called with different arguments) are refused."""
    facts = [call_of(f) for f in (facts or [])]
    chosen, first = None, None
    try:
        for fact in facts:
            variants = fact.get("variants")
            if isinstance(variants, list) and len(variants) > 1:
                raise Refused("%s is called with %d different argument sets (%s): one folder cannot "
                              "stand for them" % (site_label(fact), len(variants), spec.name))
            if isinstance(variants, list) and len(variants) == 1 and isinstance(variants[0], dict):
                fact = dict(fact, **variants[0])
            attrs = spec.sites(fact) if spec.sites is not None else {}
            try:
                attrs = spec.check_attrs(attrs)
            except ValueError as e:
                raise Refused("%s: %s" % (site_label(fact), e))
            if chosen is None:
                chosen, first = attrs, fact
            elif attrs != chosen:
                diff = [k for k in attrs if attrs[k] != chosen[k]]
                raise Refused("the sites disagree on %s: %s at %s, %s at %s" % (
                    ", ".join(diff), ", ".join("%s %s" % (k, _show(chosen[k])) for k in diff), site_label(first),
                    ", ".join("%s %s" % (k, _show(attrs[k])) for k in diff), site_label(fact)))
    except Refused as e:
        return (chosen if chosen is not None else dict(spec.attrs_defaults())), str(e)
    return (chosen if chosen is not None else dict(spec.attrs_defaults())), ""
