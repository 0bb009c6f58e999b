"""The profiler's capture pass: what each call site of a model calls, with every fact that decides its
result (docs/contracts.md "Raw facts a call site records").

One extra forward (no profiler, no_grad) runs under a TorchFunctionMode while module hooks track the
innermost running module. Recorded, at that module:

- the torch functions that kernel folders stand for (layer_norm, rms_norm, scaled_dot_product_attention,
  softmax, gelu, silu, linear, matmul/bmm/mm, cross_entropy, sum, conv...): the function's qualified
  name, its non-tensor arguments by name with the defaults filled in, tensor arguments as
  {arg, shape, dtype, stride, contiguous}, a tensor argument passed as None as null in `args`, an
  attention mask as its kind (null, "bool", "additive");
- Python functions that implement an op (transformers' apply_rotary_pos_emb / rotate_half): the
  callable's module and qualname, its arguments, and the rotary layout ("neox" when rotate_half ran
  inside it);
- the module-level ops (norms, rotary, MLP, GELU, Linear... by class name, docs/profiler.md's
  classification rule 2): class, plain attributes, parameter shapes, and for a norm a behavioural
  probe (which formula reproduces the module on fresh inputs).

join() then gives a profile row's call site its facts. Nothing here may fail a profile: the caller
catches and records "capture_error".
"""

import copy
import hashlib
import json
import re
import sys

# Short name -> the canonical key facts are filed under (aten ops and the Python stack's built-ins
# name the same call differently).
ALIASES = {
    "__matmul__": "matmul", "native_layer_norm": "layer_norm", "_softmax": "softmax",
    "cross_entropy_loss": "cross_entropy", "_fused_rms_norm": "rms_norm", "native_group_norm": "group_norm",
    "_scaled_dot_product_attention": "scaled_dot_product_attention",
    "_convolution": "conv", "convolution": "conv", "conv1d": "conv", "conv2d": "conv", "conv3d": "conv",
}

# Known signatures: the call's positional arguments by name, with defaults. Keys are the canonical
# short names; `_F` variants are torch.nn.functional's where it differs from torch's / Tensor's.
_SIG = {
    "layer_norm": (("input", None), ("normalized_shape", None), ("weight", None), ("bias", None), ("eps", 1e-5)),
    "rms_norm": (("input", None), ("normalized_shape", None), ("weight", None), ("eps", None)),
    "group_norm": (("input", None), ("num_groups", None), ("weight", None), ("bias", None), ("eps", 1e-5)),
    "scaled_dot_product_attention": (("query", None), ("key", None), ("value", None), ("attn_mask", None),
                                     ("dropout_p", 0.0), ("is_causal", False), ("scale", None),
                                     ("enable_gqa", False)),
    "softmax": (("input", None), ("dim", None), ("dtype", None)),
    "softmax_F": (("input", None), ("dim", None), ("_stacklevel", 3), ("dtype", None)),
    "gelu": (("input", None), ("approximate", "none")),
    "silu": (("input", None), ("inplace", False)),
    "linear": (("input", None), ("weight", None), ("bias", None)),
    "matmul": (("input", None), ("other", None)),
    "bmm": (("input", None), ("mat2", None)),
    "mm": (("input", None), ("mat2", None)),
    "baddbmm": (("input", None), ("batch1", None), ("batch2", None), ("beta", 1), ("alpha", 1)),
    "addmm": (("input", None), ("mat1", None), ("mat2", None), ("beta", 1), ("alpha", 1)),
    "cross_entropy": (("input", None), ("target", None), ("weight", None), ("size_average", None),
                      ("ignore_index", -100), ("reduce", None), ("reduction", "mean"), ("label_smoothing", 0.0)),
    "sum": (("input", None), ("dim", None), ("keepdim", False), ("dtype", None)),
    "conv": (("input", None), ("weight", None), ("bias", None), ("stride", 1), ("padding", 0), ("dilation", 1),
             ("groups", 1)),
}
CAPTURED = set(_SIG) - {"softmax_F"} | {"conv1d", "conv2d", "conv3d", "__matmul__"}
# Tensor-valued arguments (None is recorded as null in args; a tensor in `tensors`).
_TENSOR_ARGS = {"input", "weight", "bias", "query", "key", "value", "attn_mask", "other", "mat1", "mat2",
                "batch1", "batch2", "target"}
ROTARY_FUNCTIONS = ("apply_rotary_pos_emb", "apply_rotary_emb", "apply_rope", "rotate_half")
# Module classes recorded as module-level ops (classification rule 2 and the modules the plug replaces).
MODULE_CLASSES = re.compile(r"(?i)(rmsnorm|layernorm|norm$|rotary|rope|gelu|silu|swish|mlp|glu|feedforward|"
                            r"^linear$|softmax)")
NORM_CLASSES = re.compile(r"(?i)norm")
# A residual add: `x + y`, `torch.add(x, y)` of two float tensors of one shape (no alpha, no broadcast).
ADD_FUNCTIONS = ("add", "__add__", "__radd__")
MLP_NAMES = (("w_gate", "w_up", "w_down"), ("gate_proj", "up_proj", "down_proj"), ("w1", "w3", "w2"))
EPS_ATTRS = ("eps", "variance_epsilon", "epsilon", "norm_eps", "layer_norm_eps", "rms_norm_eps")
EPS_CANDIDATES = (1e-5, 1e-6, 1e-8, 1e-12)
# Keys left out of a row's fingerprint: they differ between instances that compute the same thing.
_NOT_FINGERPRINTED = re.compile(r"(?i)^(layer_?id|layer_?idx|idx|index|name|layer_number|block_idx)$")


def site_name(qualname):
    return qualname or "<model>"


def canonical(name):
    name = name[len("aten::"):] if name.startswith("aten::") else name
    return ALIASES.get(name, name)


def _qualified(func):
    import torch
    import torch.nn.functional as F
    name = getattr(func, "__name__", "") or ""
    if name and F.__dict__.get(name) is func:
        return "torch.nn.functional." + name
    if name and getattr(torch, name, None) is func:
        return "torch." + name
    qual = getattr(func, "__qualname__", "") or name
    if qual.split(".")[0] in ("_TensorBase", "TensorBase", "Tensor"):
        return "torch.Tensor." + name
    module = getattr(func, "__module__", None) or ""
    return (module + "." + qual) if module else qual


def _dtype(t):
    return str(t.dtype).replace("torch.", "")


def tensor_facts(arg, t):
    return {"arg": arg, "shape": list(t.shape), "dtype": _dtype(t), "stride": list(t.stride()),
            "contiguous": bool(t.is_contiguous())}


def _plain(value):
    """A JSON-able value for a non-tensor argument, or a string naming it."""
    import torch
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, torch.Size):
        return list(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) or v is None for v in value):
        return [_plain(v) for v in value]
    return "<%s>" % type(value).__name__


def _is_plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value)


def function_facts(qualified, key, args, kwargs):
    """{"kind": "function", name, args, tensors} for a call of a captured torch function."""
    import torch
    sig = _SIG.get("softmax_F" if qualified == "torch.nn.functional.softmax" else key, ())
    names = [n for n, _ in sig]
    bound = {}
    for i, v in enumerate(args):
        bound[names[i] if i < len(names) else "arg%d" % i] = v
    bound.update(kwargs or {})
    facts_args, tensors = {}, []
    for n, default in sig:
        if n not in bound:
            if n not in _TENSOR_ARGS:
                facts_args[n] = _plain(default)
            elif n in ("weight", "bias", "attn_mask"):
                facts_args[n] = None
    for n, v in bound.items():
        if n == "_stacklevel":
            continue
        if isinstance(v, torch.Tensor):
            tensors.append(tensor_facts(n, v))
            if n == "attn_mask":
                facts_args[n] = "bool" if v.dtype == torch.bool else "additive"
        elif n in _TENSOR_ARGS:
            if v is None:
                facts_args[n] = None
            else:
                facts_args[n] = _plain(v)
        else:
            facts_args[n] = _plain(v)
    return {"kind": "function", "name": qualified, "args": facts_args, "tensors": tensors}


def _class_name(module):
    return type(module).__module__ + "." + type(module).__qualname__


def module_facts(module):
    """{"kind": "module", name, args (plain attributes), params (shapes), probe (norms)}."""
    import torch
    attrs = {}
    for k, v in sorted(vars(module).items()):
        if k.startswith("_") or k == "training" or not _is_plain(v):
            continue
        attrs[k] = _plain(v)
    params = {}
    for k, p in module._parameters.items():
        params[k] = list(p.shape) if isinstance(p, torch.Tensor) else None
    facts = {"kind": "module", "name": _class_name(module), "args": attrs, "params": params, "tensors": []}
    if NORM_CLASSES.search(type(module).__name__):
        try:
            facts["probe"] = probe_norm(module)
        except Exception as exc:  # noqa: BLE001 - a probe that cannot run says why
            facts["probe"] = {"mismatch": "the probe raised %s: %s" % (type(exc).__name__, _first_line(exc))}
    return facts


def _first_line(exc):
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


def module_eps(module):
    for name in EPS_ATTRS:
        v = getattr(module, name, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


def _norm_formulas(module):
    """[(label, formula(x, w, b, eps, offset))] to try, layernorm first for *LayerNorm* classes."""
    import torch

    def rms(x, w, b, eps, offset):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (offset + w)
        return y + b if b is not None else y

    def ln(x, w, b, eps, offset):
        mu = x.mean(-1, keepdim=True)
        var = (x - mu).pow(2).mean(-1, keepdim=True)
        y = (x - mu) * torch.rsqrt(var + eps) * (offset + w)
        return y + b if b is not None else y
    name = type(module).__name__.lower()
    if "rms" in name:
        return [("rmsnorm", rms), ("layernorm", ln)]
    return [("layernorm", ln), ("rmsnorm", rms)]


def probe_norm(module, tolerance=None):
    """Runs (a float64 copy of) the norm module on fresh inputs with its own weight and with a random
    one, and finds the formula that reproduces it: rmsnorm x * rsqrt(mean(x^2) + eps) * (offset + w),
    or layernorm, offset in (0, 1), eps from the attribute or from candidates (tiny inputs make eps
    decide the result). {"formula", "offset", "eps", "max_err"} or {"mismatch": "..."}."""
    import torch
    w = getattr(module, "weight", None)
    if not isinstance(w, torch.Tensor) or w.dim() != 1:
        return {"mismatch": "no 1-d weight"}
    n = w.shape[0]
    b = getattr(module, "bias", None)
    b = b if isinstance(b, torch.Tensor) and b.dim() == 1 else None
    try:
        probe = copy.deepcopy(module).to(dtype=torch.float64)
        for h in (probe._forward_hooks, probe._forward_pre_hooks):
            h.clear()
        dtype = torch.float64
    except Exception:  # noqa: BLE001 - a module that cannot be copied: its own, weight restored after
        probe, dtype = module, w.dtype
    if tolerance is None:
        tolerance = {torch.float64: 1e-5, torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 1e-2}.get(dtype, 1e-4)
    device = w.device
    g = torch.Generator(device="cpu").manual_seed(1234)
    inputs = [torch.randn(4, n, generator=g, dtype=torch.float64),            # ordinary magnitude
              torch.randn(4, n, generator=g, dtype=torch.float64) * 3e-4]     # mean(x^2) ~ 1e-7: eps decides
    random_w = torch.randn(n, generator=g, dtype=torch.float64) * 0.5
    eps_attr = module_eps(module)
    eps_list = [eps_attr] if eps_attr is not None else []
    eps_list += [e for e in EPS_CANDIDATES if e != eps_attr]
    saved = probe.weight.detach().clone()
    outputs = []
    try:
        with torch.no_grad():
            for weight in (saved.to("cpu", torch.float64), random_w):
                probe.weight.copy_(weight.to(dtype=probe.weight.dtype, device=device))
                for x in inputs:
                    y = probe(x.to(device=device, dtype=dtype))
                    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
                        return {"mismatch": "the module does not return one tensor of its input's shape"}
                    outputs.append((x, weight, y.detach().to("cpu", torch.float64)))
    finally:
        with torch.no_grad():
            probe.weight.copy_(saved)
    bias = b.detach().to("cpu", torch.float64) if b is not None else None
    best = None
    for label, formula in _norm_formulas(module):
        for offset in (0.0, 1.0):
            for eps in eps_list:
                err = 0.0
                for x, weight, y in outputs:
                    ref = formula(x, weight, bias, eps, offset)
                    scale = max(1.0, float(ref.abs().max()))
                    err = max(err, float((y - ref).abs().max()) / scale)
                if best is None or err < best[0]:
                    best = (err, label, offset, eps)
    err, label, offset, eps = best
    if err <= tolerance:
        return {"formula": label, "offset": offset, "eps": eps, "max_err": err}
    return {"mismatch": "no rmsnorm or layernorm formula with offset 0 or 1 and eps %s reproduces the module "
                        "(closest: %s offset %g eps %g, error %.3g)" % ("/".join("%g" % e for e in eps_list), label,
                                                                        offset, eps, err)}


def _fingerprint(facts):
    """A short hash of the facts that decide a site's result (not where it is, nor a probe's error)."""
    if not facts:
        return ""
    f = {k: v for k, v in facts.items() if k not in ("module",)}
    if isinstance(f.get("args"), dict):
        f["args"] = {k: v for k, v in f["args"].items() if not _NOT_FINGERPRINTED.match(k)}
    if isinstance(f.get("probe"), dict):
        f["probe"] = {k: v for k, v in f["probe"].items() if k != "max_err"}
    if "variants" in f:
        f["variants"] = [{k: v for k, v in var.items() if k != "module"} for var in f["variants"]]
    return hashlib.sha1(json.dumps(f, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _args_key(facts):
    return json.dumps(facts.get("args"), sort_keys=True, default=str)


class Capture:
    """Call facts of one forward: module qualname -> key -> [facts...] (distinct sets)."""

    def __init__(self):
        self.functions = {}     # (site, key) -> [facts]
        self.pyfuncs = {}       # (site, python function name) -> [facts]
        self.modules = {}       # site -> facts
        self.calls = 0
        self._pystate = {}      # (site, python function) -> (id of its running frame, facts)
        self._pending = {}      # id(linear output) -> (weakref to it, the linear's facts)
        # Region links (#40, akregions.py): which call's output another op consumed.
        self.activation_sites = {}  # linear site -> site of the activation that took its output
        self._adds = {}             # id(sum) -> (weakref, version, add site, ordinal, facts)
        self.norm_inputs = {}       # norm site -> [add link or None per call]
        self.mlps = {}              # site -> (gate, up, down) child names of a gated MLP

    # -- recording ---------------------------------------------------------------------------------
    @staticmethod
    def fingerprint(facts):
        return _fingerprint(facts)

    def _add(self, table, key, facts):
        entries = table.setdefault(key, [])
        fp = json.dumps(facts, sort_keys=True, default=str)
        for e in entries:
            if e[0] == fp:
                return
        entries.append((fp, facts))

    def record_function(self, site, module_class, func, args, kwargs):
        name = getattr(func, "__name__", "") or ""
        key = canonical(name)
        if key not in CAPTURED and name not in CAPTURED:
            return
        facts = function_facts(_qualified(func), key, args, kwargs)
        facts["module"], facts["module_class"] = site, module_class
        if key == "linear":
            return facts            # filed once its output is seen: an activation may follow (output())
        self._add(self.functions, (site, key), facts)
        return None

    def output(self, facts, out):
        """A linear's output: its facts wait for the next captured call to see whether an activation
        takes that very tensor (facts["activation"]: "gelu", "gelu_tanh", "silu", "relu")."""
        import weakref
        old = self._pending.pop(id(out), None)
        if old is not None:
            self._file(old[1])
        try:
            self._pending[id(out)] = (weakref.ref(out), facts)
        except TypeError:
            self._file(facts)

    def consume(self, func, args, kwargs, site=None):
        """Called for every captured torch call: an activation of a pending linear output marks it."""
        if not self._pending or not args:
            return
        name = canonical(getattr(func, "__name__", "") or "")
        if name not in ("gelu", "silu", "relu", "relu_"):
            return
        x = args[0]
        entry = self._pending.pop(id(x), None)
        if entry is None:
            return
        if entry[0]() is not x:
            self._file(entry[1])
            return
        act = None
        if name in ("gelu",):
            approximate = kwargs.get("approximate", args[1] if len(args) > 1 else "none")
            act = "gelu_tanh" if approximate == "tanh" else "gelu"
        elif name in ("silu", "relu", "relu_"):
            act = name.rstrip("_")
        if act is not None:
            entry[1]["activation"] = act
            if site is not None:
                self.activation_sites[entry[1]["module"]] = site
        self._file(entry[1])

    def _file(self, facts):
        self._add(self.functions, (facts["module"], "linear"), facts)

    def record_pyfunc(self, site, module_class, frames):
        """frames: the rotary Python functions on the stack, innermost first (frame objects)."""
        outer = frames[-1]
        code = outer.f_code
        fn = outer.f_globals.get(code.co_name)
        if callable(fn) and getattr(fn, "__code__", None) is code:
            name = "%s.%s" % (fn.__module__, fn.__qualname__)
        else:
            name = "%s.%s" % (outer.f_globals.get("__name__", "?"), code.co_name)
        key = (site, code.co_name)
        state = self._pystate.get(key)
        if state is None or state[0] != id(outer):
            # A new call at this site (the frame is not kept: it holds the call's tensors).
            if state is not None:
                self._add(self.pyfuncs, key, state[1])
            import torch
            args, tensors = {}, []
            for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
                v = outer.f_locals.get(n)
                if isinstance(v, torch.Tensor):
                    tensors.append(tensor_facts(n, v))
                else:
                    args[n] = _plain(v)
            facts = {"kind": "function", "name": name, "args": args, "tensors": tensors,
                     "module": site, "module_class": module_class}
            state = self._pystate[key] = (id(outer), facts)
        if any(f.f_code.co_name == "rotate_half" for f in frames):
            state[1]["args"]["layout"] = "neox"

    def add_output(self, site, ordinal, args, out):
        """A residual-style add (two same-shape float tensors, ADD_FUNCTIONS) ran at `site` as its
        ordinal-th such add in this call of the site: remember its output for a norm that reads it."""
        import weakref
        facts = {"name": "torch.Tensor.add", "tensors": [tensor_facts("input", args[0]), tensor_facts("other", args[1])]}
        try:
            self._adds[id(out)] = (weakref.ref(out), out._version, site, ordinal, facts)
        except TypeError:
            pass

    def norm_input(self, site, x):
        """A norm module at `site` is called on x: the add that produced x (its site and ordinal), or None."""
        import torch
        entry = self._adds.get(id(x)) if isinstance(x, torch.Tensor) else None
        link = None
        if entry is not None and entry[0]() is x and entry[1] == x._version:
            link = {"site": entry[2], "ordinal": entry[3], "facts": entry[4]}
        self.norm_inputs.setdefault(site, []).append(link)

    def finish(self):
        self._adds = {}
        for _, facts in self._pending.values():
            self._file(facts)
        self._pending = {}
        for key, (_, facts) in self._pystate.items():
            self._add(self.pyfuncs, key, facts)
        self._pystate = {}

    # -- joining -----------------------------------------------------------------------------------
    def join(self, qualname, torch_fn, aten_op, op_stack, frames, shapes):
        """The facts of a profile call site, or None."""
        site = site_name(qualname)
        keys = [canonical(torch_fn)] if torch_fn else []
        keys += [canonical(n) for n in reversed(op_stack or [])] + [canonical(aten_op or "")]
        names = [f.split(" (")[0] for f in frames or []]
        # A Python function of the same name (a torch function's pure-Python stand-in) last.
        keys += [canonical(n) for n in names]
        for key in keys:
            entries = self.functions.get((site, key))
            if entries:
                return _pick(entries, shapes)
        rotary = [n for n in names if n in ROTARY_FUNCTIONS]
        for name in reversed(rotary):             # the outermost: apply_rotary_pos_emb over rotate_half
            entries = self.pyfuncs.get((site, name))
            if entries:
                return _pick(entries, shapes)
        facts = self.modules.get(site)
        return dict(facts) if facts else None


def _folded(shape):
    """[..., M, K] with the leading dims multiplied into one: [2, 12, 64, 16] -> [24, 64, 16]."""
    if not isinstance(shape, list) or len(shape) < 3:
        return shape
    n = 1
    for d in shape[:-2]:
        n *= d
    return [n] + shape[-2:]


def _pick(entries, shapes):
    """One site's facts from the distinct sets recorded there: those whose tensor shapes are the row's,
    else all; several argument sets become "variants"."""
    facts_list = [f for _, f in entries]
    exact = [f for f in facts_list if [t["shape"] for t in f["tensors"]] == [list(s) for s in shapes or []]]
    if not exact:
        # The bmm a 4-D torch.matmul dispatches to sees its operands with the leading dims folded into one
        # batch: q @ k^T and P @ V at one site are told apart by shape (and so get their own layouts).
        exact = [f for f in facts_list if [_folded(t["shape"]) for t in f["tensors"]]
                 == [_folded(list(s)) for s in shapes or []]]
    chosen = exact or facts_list
    out = dict(chosen[0])
    distinct = {}
    for f in chosen:
        distinct.setdefault(_args_key(f), f)
    if len(distinct) > 1:
        out["variants"] = [{"args": f["args"], "tensors": f["tensors"]} for f in distinct.values()]
    return out


def capture(model, inputs, device):
    """One forward of `model` under the capture mode; returns a Capture (facts per site)."""
    import torch
    from torch.overrides import TorchFunctionMode
    cap = Capture()
    stack = []              # (site, class) of the running modules, innermost last
    handles = []
    names = {}
    for qualname, module in model.named_modules():
        names[id(module)] = site_name(qualname)

    def pre(mod, inputs_):
        site = names.get(id(mod), "?")
        stack.append([site, _class_name(mod), 0])      # [site, class, residual adds so far in this call]
        if NORM_CLASSES.search(type(mod).__name__) and inputs_:
            try:
                cap.norm_input(site, inputs_[0])
            except Exception:  # noqa: BLE001 - a link we cannot read is left out
                pass

    def post(mod, inputs_, output):
        if stack:
            stack.pop()

    for _, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = kwargs or {}
            pending = None
            residual_add = None
            if stack:
                site, cls = stack[-1][0], stack[-1][1]
                try:
                    cap.calls += 1
                    if is_residual_add(func, args, kwargs):
                        residual_add = stack[-1][2]
                        stack[-1][2] += 1
                    cap.consume(func, args, kwargs, site)
                    pending = cap.record_function(site, cls, func, args, kwargs)
                    frames, f = [], sys._getframe(1)
                    depth = 0
                    while f is not None and depth < 12:
                        if f.f_code.co_name in ROTARY_FUNCTIONS:
                            frames.append(f)
                        f, depth = f.f_back, depth + 1
                    if frames:
                        cap.record_pyfunc(site, cls, frames)
                except Exception:  # noqa: BLE001 - a fact we cannot read is left out, never the call
                    pass
            out = func(*args, **kwargs)
            if residual_add is not None:
                try:
                    cap.add_output(site, residual_add, args, out)
                except Exception:  # noqa: BLE001
                    pass
            if pending is not None:
                try:
                    cap.output(pending, out)
                except Exception:  # noqa: BLE001
                    pass
            return out

    try:
        with torch.no_grad(), Mode():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    cap.finish()
    for qualname, module in model.named_modules():
        for triple in MLP_NAMES:
            if all(isinstance(getattr(module, n, None), torch.nn.Linear) for n in triple):
                cap.mlps[site_name(qualname)] = triple
                break
    for qualname, module in model.named_modules():
        if MODULE_CLASSES.search(type(module).__name__):
            facts = module_facts(module)
            facts["module"], facts["module_class"] = site_name(qualname), _class_name(module)
            cap.modules[site_name(qualname)] = facts
    return cap


def fingerprint(facts):
    return _fingerprint(facts)


def is_residual_add(func, args, kwargs):
    """`x + y` / `torch.add(x, y)` of two floating tensors of one shape and dtype, without alpha: the
    add a residual stream does (the plug counts adds the same way: modelplug/plug/regions.py)."""
    import torch
    if (getattr(func, "__name__", "") not in ADD_FUNCTIONS or len(args) != 2 or kwargs
            or not all(isinstance(a, torch.Tensor) for a in args)):
        return False
    a, b = args
    return a.is_floating_point() and a.dtype == b.dtype and a.shape == b.shape and a.dim() >= 2
