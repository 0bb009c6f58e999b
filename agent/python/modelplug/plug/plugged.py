"""Plugged: kernels put into one model at their call sites, and taken out again (restore)."""

import types

import torch

from .fused import ACTIVATION_FAMILY, _ACTIVATION_CLASS, _ACTIVATION_FUNCTIONS, _FusedMarks, _SkipActivation
from .functions import _Route
from .kernel import FUNCTION_OPS, TorchFunctionMode, _compiling
from .modules import FROZEN_WT, _module_forward
from .regions import REGION_OPS, _plug_region
from .rotary import plug_function


_STACK = (getattr(torch._C, "_len_torch_function_stack", None), getattr(torch._C, "_get_function_stack_at", None))


def _mode_on_top(mode):
    """Whether `mode` is the innermost TorchFunctionMode of this thread (False where torch cannot say, or
    while torch.compile traces: then the mode stays entered, as it always did)."""
    depth, at = _STACK
    if depth is None or at is None or _compiling():
        return False
    n = depth()
    return n > 0 and at(n - 1) is mode


def _quiet(child):
    """Whether a child module's call runs no torch function of its own: nn.Identity (timm's LayerScale and
    DropPath at inference), or a region's norm whose forward hands back the region kernel's output
    (regions.py marks it). Stepping a site's mode aside around such a child costs two mode switches and
    the hooks' slow call path for nothing."""
    own = vars(child).get("forward")
    if own is None:
        return type(child).forward is torch.nn.Identity.forward
    return bool(getattr(getattr(own, "__func__", own), "_autokernel_quiet", False))


def may_call(module, names, depth=3):
    """Whether the module's forward may call a function named one of `names`: its code (nested functions
    and the module's own methods it calls included, `depth` deep) names one, or an attribute of the
    module holding a plain function does. A call made some other way (getattr(F, name)) is missed: its
    fused output then goes untaken, which is counted as a fallback and caught by parity."""
    fwd = vars(module).get("forward") or getattr(type(module), "forward", None)
    code = getattr(getattr(fwd, "__func__", fwd), "__code__", None)
    if code is None:
        return True
    seen, stack = set(), [(code, 0)]
    while stack:
        c, level = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        if any(n in c.co_names for n in names):
            return True
        stack.extend((x, level) for x in c.co_consts if isinstance(x, types.CodeType))
        if level < depth:
            for n in c.co_names:
                method = getattr(type(module), n, None)
                if isinstance(method, types.FunctionType):
                    stack.append((method.__code__, level + 1))
    return any(callable(v) and not isinstance(v, torch.nn.Module) and getattr(v, "__name__", "") in names
               for v in vars(module).values())


class Plugged:
    """Kernels plugged into one model; restore() puts the model back exactly as it was.

    frozen=True is for a model whose weights do not change from here on (a copy about to be
    compiled): each plugged Linear gets its W^T as a buffer, made once, instead of the eager path's
    cache that follows weight updates."""

    def __init__(self, model, kernels, frozen=False):
        self.model, self.kernels = model, list(kernels)
        self._buffers = []
        self._handles, self._forwards = [], []
        self._patched = []                  # (globals dict, name, original function)
        self._mode_stacks = []              # each call-site hook's entered route modes
        self._chains = {}                   # id(module) -> (pre-hooks, hooks) run in order (_on)
        self._marks = None
        self._wrapped_acts = set()
        modules = dict(model.named_modules())
        routes_by_module = {}
        for k in self.kernels:
            fused = k.op_type == "matmul" and k.attrs.get("activation", "none") != "none"
            if fused:
                if self._marks is None:
                    self._marks = _FusedMarks()
                    self._handles.append(model.register_forward_hook(self._check_fused))
                k.fused_marks = self._marks
            for site in k.sites:
                if k.op_type in REGION_OPS:             # the residual add + norm: regions.py
                    why = _plug_region(self, k, site, modules, routes_by_module)
                    if why:
                        k.unplugged[site] = why
                    else:
                        k.plugged_sites.append(site)
                    continue
                module = modules.get(site if site != "<model>" else "")
                if module is None:
                    k.unplugged[site] = "no module named %r in this model" % site
                    continue
                if k.op_type == "rotary_embedding" and k.attrs.get("layout") == "neox":
                    why = plug_function(self, k, module)
                    if why:
                        k.unplugged[site] = why
                    else:
                        k.plugged_sites.append(site)
                    continue
                forward = _module_forward(k, module)
                if isinstance(forward, str):
                    k.unplugged[site] = forward
                    continue
                if forward is not None:
                    if frozen and k.op_type == "matmul" and FROZEN_WT not in module._buffers:
                        with torch.no_grad():
                            module.register_buffer(FROZEN_WT, module.weight.detach().t().contiguous(), persistent=False)
                        self._buffers.append(module)
                    self._forwards.append((module, "forward" in vars(module), vars(module).get("forward")))
                    module.forward = types.MethodType(forward, module)
                    k.plugged_sites.append(site)
                    continue
                if k.op_type not in FUNCTION_OPS:
                    k.unplugged[site] = "op type %s has no plug" % k.op_type
                    continue
                if TorchFunctionMode is None:
                    k.unplugged[site] = "this torch has no TorchFunctionMode"
                    continue
                routes = routes_by_module.setdefault(site, (module, {}))[1]
                for name in FUNCTION_OPS[k.op_type]:
                    routes.setdefault(name, []).append(k)
                k.plugged_sites.append(site)
            if fused:
                for site in k.plugged_sites:
                    self._skip_activation_near(k, site, modules, routes_by_module)
        for site, (module, routes) in routes_by_module.items():
            self._hook(module, routes)

    def _skip_activation_near(self, k, site, modules, routes_by_module):
        """Where the activation after the linear at `site` runs: the code of the linear's parent (an
        nn.Linear site) or of the site itself (a functional linear), as a torch function or as an
        activation module among its children. Both are taken out for the fused output only."""
        module = modules.get(site if site != "<model>" else "")
        if module is None:
            return
        owner_name = site.rpartition(".")[0] if isinstance(module, torch.nn.Linear) else site
        owner_name = "" if owner_name in ("", "<model>") else owner_name
        owner = modules.get(owner_name)
        if owner is None:
            return
        family = ACTIVATION_FAMILY.get(k.attrs.get("activation"), "")
        skip = _SkipActivation(self._marks, family)
        names = _ACTIVATION_FUNCTIONS.get(family, ())
        # The function route's mode costs every torch call in the owner, its children's included (the
        # Linear's own launch): only where the owner's code may call the activation as a function.
        if owner is module or may_call(owner, names):
            routes = routes_by_module.setdefault(owner_name or "<model>", (owner, {}))[1]
            for name in names:
                if not any(isinstance(r, _SkipActivation) and r.family == family for r in routes.get(name, ())):
                    routes.setdefault(name, []).insert(0, skip)     # before a kernel of the activation itself
        pattern = _ACTIVATION_CLASS.get(family)
        for child in owner.children():
            if pattern is None or not pattern.search(type(child).__name__) or id(child) in self._wrapped_acts:
                continue
            self._wrapped_acts.add(id(child))
            # The child's own forward, or one a kernel of the activation swapped in (swap.py) before.
            own = vars(child).get("forward")
            original = own.__func__ if isinstance(own, types.MethodType) else type(child).forward

            def act_forward(this, x, *args, _orig=original, _family=family, **kwargs):
                if not args and not kwargs and self._marks is not None and self._marks.take(x, _family):
                    return x
                return _orig(this, x, *args, **kwargs)
            self._forwards.append((child, "forward" in vars(child), vars(child).get("forward")))
            child.forward = types.MethodType(act_forward, child)

    def _check_fused(self, model, inputs, output):
        if self._marks is None:
            return
        for k in self._marks.leftover():
            k.fallback("the model's own %s after the linear was not found in its parent's code or activation "
                       "module: it was applied on top of the kernel's" % k.attrs.get("activation"))

    def _hook(self, module, routes):
        stack, nested = [], [0]
        self._mode_stacks.append(stack)     # a forward that raised never ran `post`: restore() exits its mode

        def pre(mod, inputs):
            mode = _Route(routes, nested)
            mode.__enter__()
            mode.active = True
            stack.append(mode)

        def post(mod, inputs, output):
            if stack:
                mode = stack.pop()
                if mode.active:
                    mode.__exit__(None, None, None)

        # While a child module runs the site's mode steps aside (its calls are another site's): else every
        # torch call and tensor attribute read in the child (a plugged Linear's launch: Triton reads each
        # argument's data_ptr, dtype, strides) would pass through the mode's Python. Only when the mode is
        # the innermost one (another site's mode entered in between stays as it is) and not under compile.
        def enter_child(mod, inputs):
            nested[0] += 1
            if nested[0] == 1 and stack and stack[-1].active and _mode_on_top(stack[-1]):
                stack[-1].__exit__(None, None, None)
                stack[-1].active = False

        def leave_child(mod, inputs, output):
            nested[0] -= 1
            if nested[0] == 0 and stack and not stack[-1].active:
                stack[-1].__enter__()
                stack[-1].active = True

        self._on(module, pre, post)
        for child in module.children():
            if not _quiet(child):
                self._on(child, enter_child, leave_child, outer=True)

    def _on(self, module, pre, post, outer=False):
        """pre/post as the module's forward pre-hook and hook, in one ordered chain per module: a child
        site steps out of its parent site's mode (outer) before entering its own, and leaves its own before
        the parent's comes back. Two hooks each would run in registration order: with the parent's
        registered first, its mode came back on top of the child's, whose exit then popped the parent's,
        leaving the child's mode entered for the rest of the parent's forward (H100: -32 % on the llama
        example with attention and residual-add regions plugged together)."""
        chains = self._chains.get(id(module))
        if chains is None:
            chains = self._chains[id(module)] = ([], [])
            befores, afters = chains

            def run_pre(mod, inputs):
                for f in befores:
                    f(mod, inputs)

            def run_post(mod, inputs, output):
                for f in afters:
                    f(mod, inputs, output)
            self._handles.append(module.register_forward_pre_hook(run_pre))
            self._handles.append(module.register_forward_hook(run_post))
        befores, afters = chains
        if outer:
            befores.insert(0, pre)
            afters.append(post)
        else:
            befores.append(pre)
            afters.insert(0, post)

    def restore(self):
        for h in self._handles:
            h.remove()
        self._handles = []
        self._chains = {}
        for stack in getattr(self, "_mode_stacks", ()):
            while stack:
                mode = stack.pop()
                if mode.active:
                    mode.__exit__(None, None, None)
        self._mode_stacks = []
        for g, name, original in reversed(self._patched):
            g[name] = original
        self._patched = []
        self._marks = None
        self._wrapped_acts = set()
        for k in self.kernels:
            if hasattr(k, "fused_marks"):
                del k.fused_marks
        for k in self.kernels:
            if hasattr(k, "_gate"):
                del k._gate
        for module in self._buffers:
            del module._buffers[FROZEN_WT]
        self._buffers = []
        for module, had, forward in reversed(self._forwards):
            if had:
                module.forward = forward
            else:
                del module.forward
        self._forwards = []

    def report(self):
        return [k.report() for k in self.kernels]

    def reset_counts(self):
        for k in self.kernels:
            k.routed, k.fallbacks = 0, {}
