"""Anti-cheat: the functions and global switches the harness relies on must be the ones it saw
before any kernel was imported.

A golden snapshot is taken when this module is first imported (in a fresh worker, before any
kernel ran): every callable of torch, torch.nn.functional, Tensor, the timers, the harness's own
modules and the op specs. After a kernel is imported and after every stage the current state is
compared with it; a difference fails the bench and the original objects are put back, so a
cheating kernel cannot poison later experiments in the same warm worker.
"""

import builtins
import math
import random
import statistics
import sys
import time
import types

_GOLDEN = {}
_GOLDEN_FLAGS = {}


def _targets():
    import torch
    import torch.nn.functional as F
    out = [("torch", torch), ("torch.nn.functional", F), ("torch.Tensor", torch.Tensor),
           ("time", time), ("math", math), ("random", random), ("statistics", statistics),
           ("builtins", builtins)]
    for label in ("_TensorBase", "TensorBase", "_VariableFunctions", "_nn"):
        obj = getattr(torch._C, label, None)
        if obj is not None:
            out.append(("torch._C." + label, obj))
    for label in ("linalg", "special", "fft", "cuda", "testing"):
        obj = getattr(torch, label, None)
        if isinstance(obj, types.ModuleType):
            out.append(("torch." + label, obj))
    if hasattr(torch, "cuda") and hasattr(torch.cuda, "Event"):
        out.append(("torch.cuda.Event", torch.cuda.Event))
    for name, module in list(sys.modules.items()):
        if module is None:
            continue
        if name == "harness" or name.startswith("harness.") or name == "triton.testing":
            out.append((name, module))
    from .. import ops
    for spec in ops.OPS.values():
        out.append(("OpSpec(%s)" % spec.name, spec))
    return out


def _members(obj):
    try:
        items = list(vars(obj).items())
    except TypeError:
        return {}
    return {k: v for k, v in items
            if callable(v) or isinstance(v, (types.ModuleType, staticmethod, classmethod, property))}


def flags():
    """Global switches that change what the reference computes or how fast it runs."""
    import torch
    f = {"default_dtype": str(torch.get_default_dtype()), "num_threads": torch.get_num_threads()}
    try:
        f["cuda.matmul.allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
        f["cudnn.allow_tf32"] = bool(torch.backends.cudnn.allow_tf32)
        f["cuda.matmul.allow_fp16_reduced_precision_reduction"] = bool(
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)
    except AttributeError:
        pass
    if hasattr(torch, "get_float32_matmul_precision"):
        f["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    return f


def _set_flag(name, value):
    import torch
    if name == "num_threads":
        torch.set_num_threads(int(value))
    elif name == "default_dtype":
        torch.set_default_dtype(getattr(torch, value.replace("torch.", "")))
    elif name == "cuda.matmul.allow_tf32":
        torch.backends.cuda.matmul.allow_tf32 = value
    elif name == "cudnn.allow_tf32":
        torch.backends.cudnn.allow_tf32 = value
    elif name == "cuda.matmul.allow_fp16_reduced_precision_reduction":
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = value
    elif name == "float32_matmul_precision":
        torch.set_float32_matmul_precision(value)


def capture():
    """Extend the golden snapshot with targets not seen before (e.g. triton.testing imported by the
    harness itself before a kernel). Call only while no kernel module is loaded."""
    for label, obj in _targets():
        if label not in _GOLDEN:
            _GOLDEN[label] = (obj, _members(obj))
    if not _GOLDEN_FLAGS:
        _GOLDEN_FLAGS.update(flags())


def check(restore=True):
    """List of human-readable differences from the golden snapshot (empty = intact)."""
    problems = []
    for label, (obj, members) in _GOLDEN.items():
        now = _members(obj)
        for name, original in members.items():
            if now.get(name) is not original:
                problems.append("%s.%s was replaced" % (label, name))
                if restore:
                    try:
                        setattr(obj, name, original)
                    except (AttributeError, TypeError):
                        object.__setattr__(obj, name, original)
    now_flags = flags()
    for name, value in _GOLDEN_FLAGS.items():
        if now_flags.get(name) != value:
            problems.append("global setting %s changed from %r to %r (restore it inside kernel_fn)"
                            % (name, value, now_flags.get(name)))
            if restore:
                _set_flag(name, value)
    return problems


def golden_flag(name):
    return _GOLDEN_FLAGS.get(name)
