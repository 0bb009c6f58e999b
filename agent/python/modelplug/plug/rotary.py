"""The NeoX (rotate_half) rotary: plugged through the model's own apply_rotary_pos_emb (the contract's
callable), replaced in its Python module's globals while plugged, routing only while a call-site
module's own code runs."""

import inspect
import types
import weakref

import torch

from .kernel import _compiling, _fits, _in_kernel

# --- function-level plug of a model's own Python function (NeoX rotary) -------------------------

def _rope_neox(k, q, kk, cos, sin, position_ids, unsqueeze_dim):
    """transformers' apply_rotary_pos_emb through the kernel (x[B, H, S, D], cos[S, D/2], sin[S, D/2]):
    (q_embed, k_embed), or None after counting the reason to fall back."""
    if unsqueeze_dim not in (1, -3):
        return k.fallback("q/k are not [B, H, S, D] (unsqueeze_dim %s)" % (unsqueeze_dim,))
    if not all(isinstance(t, torch.Tensor) for t in (q, kk, cos, sin)):
        return k.fallback("an argument is not a tensor")
    if position_ids is not None and cos.dim() == 2:
        cos, sin = cos[position_ids], sin[position_ids]         # older transformers: tables [S, D] indexed here
    if cos.dim() == 2:
        cos, sin = cos.unsqueeze(0), sin.unsqueeze(0)
    if q.dim() != 4 or kk.dim() != 4 or cos.dim() != 3 or sin.shape != cos.shape or \
            cos.shape[-1] != q.shape[-1] or cos.shape[-2] != q.shape[-2] or kk.shape[-2:] != q.shape[-2:]:
        return k.fallback("shapes do not fit q, k [B, H, S, D] with cos/sin [B or 1, S, D]")
    why = _fits(k, q, kk)
    if why:
        return k.fallback(why)
    tables = _tables(k, cos, sin, q.dtype)
    if isinstance(tables, str):
        return k.fallback(tables)
    c, s = tables
    return k.run(q.contiguous(), c, s), k.run(kk.contiguous(), c, s)


MAX_TABLES = 64          # per kernel: the table pairs of the forwards in flight (one each, usually)


def _tables(k, cos, sin, dtype):
    """The kernel's tables (cos, sin [S, D/2] in dtype) from the model's cos/sin [B or 1, S, D], or why
    they do not fit: one table for every batch row, and the NeoX layout's duplicated halves. Both are
    facts about the values, so reading them costs a device-to-host copy, and on a GPU a sync that stalls
    the host until everything queued before has run: three such reads per call in eight layers made the
    kernel lose 12 % in a Llama on an H100 that it wins by 3.6x alone (docs/benchmarks.md, session 24).
    All the checks are read at once, and the answer is kept for the same table tensors (the same
    objects, unchanged since: weak references and version counters), which a model computes once per
    forward and hands to every layer: one read per forward instead of three per layer. Under
    torch.compile nothing is kept (Dynamo must not guard on id()-keyed state)."""
    cache = None if _compiling() else k.__dict__.setdefault("_rotary_tables", {})
    key = (id(cos), id(sin), dtype)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None and hit[0]() is cos and hit[1]() is sin and hit[2] == (cos._version, sin._version):
            return hit[3]
    half = cos.shape[-1] // 2
    checks = []
    if cos.shape[0] > 1:
        checks += [(cos == cos[:1]).all(), (sin == sin[:1]).all()]
    c, s = cos[0], sin[0]
    checks += [(c[:, :half] == c[:, half:]).all(), (s[:, :half] == s[:, half:]).all()]
    flags = torch.stack(checks).tolist()            # the one read
    if not all(flags[:-2]):
        out = "cos/sin differ between batch rows (per-sequence positions; the kernel takes one table)"
    elif not all(flags[-2:]):
        out = "cos/sin halves differ (not the NeoX layout's duplicated halves)"
    else:
        out = (c[:, :half].to(dtype).contiguous(), s[:, :half].to(dtype).contiguous())
    if cache is not None:
        for gone in [key for key, v in cache.items() if v[0]() is None or v[1]() is None]:
            del cache[gone]                         # the tables of forwards that are over
        if len(cache) >= MAX_TABLES:
            cache.clear()
        try:
            cache[key] = (weakref.ref(cos), weakref.ref(sin), (cos._version, sin._version), out)
        except TypeError:
            pass
    return out


ROTARY_FUNCTION = "apply_rotary_pos_emb"     # transformers' name, looked up when the contract names none


def _callable_name(spec):
    """("python.module", "qualname") of a contract callable "function:pkg.mod.fn"; ("", "") if none."""
    if not spec or not spec.startswith("function:"):
        return "", ""
    name = spec[len("function:"):]
    if name.startswith("torch."):
        return "", ""
    module, _, qual = name.rpartition(".")
    return module, qual


def _function_globals(module, qual):
    """The globals dicts the module's forward code looks `qual` up in (its class and bases)."""
    out = []
    for cls in type(module).__mro__:
        fwd = cls.__dict__.get("forward")
        g = getattr(fwd, "__globals__", None)
        if g is not None and qual in g and all(g is not o for o in out):
            out.append(g)
    return out


def plug_function(plugged, k, module):
    """Routes the model's own rotary function (the contract's callable) to the kernel while `module`
    runs; "" or the reason it cannot."""
    py_module, qual = _callable_name(k.callable)
    if not qual and k.callable:
        return ("a NeoX (rotate_half) rotary is plugged through the model's own function, and the "
                "contract's callable (%r) names none" % k.callable)
    short = qual.rpartition(".")[2] if qual else ROTARY_FUNCTION
    targets = []
    for g in _function_globals(module, short):
        fn = g[short]
        original = getattr(fn, "_autokernel_original", fn)
        name = "%s.%s" % (getattr(original, "__module__", ""), getattr(original, "__qualname__", ""))
        if (name == "%s.%s" % (py_module, qual)) if qual else isinstance(original, types.FunctionType):
            targets.append(g)
    if not targets:
        if qual:
            return "%s.%s is not what this module's forward calls" % (py_module, qual)
        return ("a NeoX (rotate_half) rotary is plugged through the model's own %s, and this module's "
                "forward calls none (the contract names no callable)" % ROTARY_FUNCTION)
    gate = getattr(k, "_gate", None)
    if gate is None:
        gate = k._gate = {"active": 0, "nested": 0, "modules": set()}
    if id(module) not in gate["modules"]:
        gate["modules"].add(id(module))
        _gate_hooks(plugged, module, gate)
    for g in targets:
        if any(p[0] is g and p[1] == short for p in plugged._patched):
            continue
        original = g[short]
        try:
            signature = inspect.signature(original)
        except (TypeError, ValueError):
            return "the signature of %s cannot be read" % qual
        params = list(signature.parameters)
        if len(params) < 4:
            return "%s takes fewer than (q, k, cos, sin)" % qual

        def rotary(*args, _orig=original, _sig=signature, _names=params, **kwargs):
            if gate["active"] and not gate["nested"] and not _in_kernel():
                try:
                    bound = _sig.bind(*args, **kwargs)
                    bound.apply_defaults()
                except TypeError:
                    bound = None
                if bound is not None:
                    a = bound.arguments
                    extra = set(a) - set(_names[:4]) - {"position_ids", "unsqueeze_dim"}
                    if extra and any(a[n] is not None for n in extra):
                        k.fallback("%s called with arguments the kernel does not take (%s)"
                                   % (_orig.__name__, ", ".join(sorted(extra))))
                    else:
                        out = _rope_neox(k, *(a[n] for n in _names[:4]), a.get("position_ids"),
                                         a.get("unsqueeze_dim", 1))
                        if out is not None:
                            return out
            return _orig(*args, **kwargs)
        rotary._autokernel_original = original
        rotary.__name__, rotary.__qualname__ = original.__name__, original.__qualname__
        g[short] = rotary
        plugged._patched.append((g, short, original))
    return ""

def _gate_hooks(plugged, module, gate):
    def pre(mod, inputs):
        gate["active"] += 1

    def post(mod, inputs, output):
        gate["active"] -= 1

    def enter_child(mod, inputs):
        if gate["active"]:
            gate["nested"] += 1

    def leave_child(mod, inputs, output):
        if gate["nested"]:
            gate["nested"] -= 1

    plugged._handles.append(module.register_forward_pre_hook(pre))
    plugged._handles.append(module.register_forward_hook(post))
    for child in module.children():
        plugged._handles.append(child.register_forward_pre_hook(enter_child))
        plugged._handles.append(child.register_forward_hook(leave_child))
