"""Regions (#40): the residual add and the norm that reads its sum, as one kernel."""

import re
import types
import weakref

import torch

from .functions import ADAPTERS
from .kernel import LAYERNORM_EPS, RMSNORM_EPS, _compiling, _fits, _rows, _same
from .normcheck import layernorm_mismatch, module_eps, rmsnorm_mismatch

# --- regions (#40): the residual add and the norm that reads its sum, as one kernel ---------------
#
# A region site is "NORM_SITE@add:ADD_SITE#ORDINAL" (profiler/python/akregions.py): the norm module, and
# the add that feeds it named by the module whose own code runs it and its ordinal among that code's
# residual adds (`x + y` / `torch.add(x, y)` of two float tensors of one shape, counted the way the
# profiler's capture counted them). At that add the kernel runs on (x, residual, norm.weight[, bias])
# and returns out[2, M, N]: the model gets out[0] as the sum; out[1], the normalised rows, waits for the
# norm module, whose forward returns it only for exactly that tensor (same object, unchanged since).
# Anything else the norm is called on runs its own forward, counted as a fallback; a sum no norm takes
# is counted too. Exact by construction: the model sees the kernel's sum where its add was, and the
# norm's output only where the norm was called on that very sum.

REGION_OPS = ("add_rmsnorm", "add_layernorm")
_REGION_SITE = re.compile(r"^(?P<norm>.+)@add:(?P<add>.+)#(?P<ordinal>\d+)$")
_ADD_FUNCTIONS = ("add", "__add__", "__radd__")


def region_site(site):
    """(norm site, add site, ordinal) of a region site string, or None for a plain module name."""
    m = _REGION_SITE.match(site or "")
    return (m.group("norm"), m.group("add"), int(m.group("ordinal"))) if m else None


def _is_residual_add(args, kwargs):
    """The capture's predicate (akcapture.is_residual_add), on a call already known to be an add."""
    if len(args) != 2 or kwargs or not all(isinstance(a, torch.Tensor) for a in args):
        return False
    a, b = args
    return a.is_floating_point() and a.dtype == b.dtype and a.shape == b.shape and a.dim() >= 2


def _region_norm_check(k, module):
    if k.op_type == "add_rmsnorm":
        w = getattr(module, "weight", None)
        if not isinstance(w, torch.Tensor) or w.dim() != 1:
            return "the module has no 1-d weight (the rmsnorm contract scales by weight[N])"
        eps, offset = float(k.attrs.get("eps", RMSNORM_EPS)), float(k.attrs.get("offset", 0.0))
        own = module_eps(module)
        if own is not None and not _same(own, eps):
            return "eps %g, the kernel implements %g" % (own, eps)
        return rmsnorm_mismatch(module, eps, offset)
    return layernorm_mismatch(module, float(k.attrs.get("eps", LAYERNORM_EPS)), bool(k.attrs.get("bias", True)))


class _RegionAdds:
    """A route entry at an add site: counts the site's residual adds per call, runs the region kernel
    at the ordinals the profile recorded, and keeps each normalised output for its norm."""
    op_type = "_region_add"

    def __init__(self):
        self.count = 0
        self.targets = {}           # ordinal -> (kernel, norm module)
        self.pending = {}           # id(sum) -> (weakref to it, its version, norm module, y, kernel)

    def reset(self, *_):
        self.count = 0

    def run(self, args, kwargs):
        # Under torch.compile the region steps aside: inductor fuses the add and the norm itself, and
        # this bookkeeping (ids, weak references) would break the graph.
        if _compiling() or not _is_residual_add(args, kwargs):
            return None
        ordinal, self.count = self.count, self.count + 1
        target = self.targets.get(ordinal)
        if target is None:
            return None
        k, norm = target
        x, r = args
        params = [norm.weight] + ([norm.bias] if k.op_type == "add_layernorm" and k.attrs.get("bias", True) else [])
        why = _fits(k, x, r, *params)
        if why or x.shape[-1] != norm.weight.shape[0]:
            return k.fallback(why or "hidden size differs from the norm's weight")
        out = k.run(_rows(x).contiguous(), _rows(r).contiguous(), *params)
        h, y = out[0].view(x.shape), out[1].view(x.shape)
        try:
            self.pending[id(h)] = (weakref.ref(h), h._version, norm, y, k)
        except TypeError:
            return None
        return h

    def take(self, norm, x):
        entry = self.pending.pop(id(x), None) if isinstance(x, torch.Tensor) else None
        if entry is None or entry[0]() is not x or entry[1] != x._version or entry[2] is not norm:
            return None
        return entry[3]

    def leftover(self):
        out = [e[4] for e in self.pending.values()]
        self.pending = {}
        return out


def _region_add(entry, args, kwargs):
    return entry.run(args, kwargs)


ADAPTERS["_region_add"] = _region_add


def _plug_region(plugged, k, site, modules, routes_by_module):
    """Plugs a region kernel at one region site; "" or why it cannot."""
    parsed = region_site(site)
    if parsed is None:
        return "%r is not a region site (NORM@add:SITE#N): profile the model again" % site
    norm_site, add_site, ordinal = parsed
    norm = modules.get("" if norm_site == "<model>" else norm_site)
    owner = modules.get("" if add_site == "<model>" else add_site)
    if norm is None or owner is None:
        return "no module named %r in this model" % (norm_site if norm is None else add_site)
    why = _region_norm_check(k, norm)
    if why:
        return why
    routes = routes_by_module.setdefault(add_site, (owner, {}))[1]
    adds = next((e for e in routes.get("add", ()) if isinstance(e, _RegionAdds)), None)
    if adds is None:
        adds = _RegionAdds()
        for name in _ADD_FUNCTIONS:
            routes.setdefault(name, []).insert(0, adds)
        plugged._handles.append(owner.register_forward_pre_hook(adds.reset))
        def unread(*_args, _adds=adds):
            for k2 in _adds.leftover():     # a forward hook returning something would replace the output
                k2.fallback("the sum of a residual add no norm read (the kernel's normalised output was not used)")
        plugged._handles.append(plugged.model.register_forward_hook(unread))
    if ordinal in adds.targets:
        return "the add %s#%d already feeds another region" % (add_site, ordinal)
    adds.targets[ordinal] = (k, norm)
    norms = plugged.__dict__.setdefault("_region_norms", {})     # id(norm module) -> [_RegionAdds]
    if id(norm) not in norms:
        sources = norms[id(norm)] = []
        own = vars(norm).get("forward")      # a layernorm/rmsnorm kernel's swapped forward (swap.py), if any
        original = own.__func__ if isinstance(own, types.MethodType) else type(norm).forward
        plugged._forwards.append((norm, "forward" in vars(norm), vars(norm).get("forward")))

        def forward(self, x, *args, **kwargs):
            if _compiling():
                return original(self, x, *args, **kwargs)
            if not args and not kwargs:
                for src in sources:
                    y = src.take(self, x)
                    if y is not None:
                        return y
            k.fallback("%s was called on another tensor than its region's sum" % norm_site)
            return original(self, x, *args, **kwargs)
        # Quiet (plugged._quiet): taking the region's output runs no torch function, so the add site's
        # mode need not step aside around this norm; a fallback runs the norm's own code under that mode,
        # where a norm's torch calls (no add of two same-shape tensors) are passed through as they are.
        forward._autokernel_quiet = True
        norm.forward = types.MethodType(forward, norm)
    if adds not in norms[id(norm)]:
        norms[id(norm)].append(adds)
    return ""
