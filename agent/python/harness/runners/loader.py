"""Reading kernel files: the contract names statically (ast, before any kernel code runs), then
the module itself under a unique name (a fresh module object per bench, never a cached one)."""

import ast
import importlib.util
import itertools
import os
import sys
import traceback

from ..contract.rules import CONTRACT_NAMES as CONTRACT

DYNAMIC = object()          # the value is not a literal: known only after import
_counter = itertools.count(1)
_PREFIX = "_ak_kernel_"


class KernelFileError(Exception):
    """The kernel file cannot be used at all (missing, syntax, contract, missing dependency)."""


def read_source(path):
    """The kernel file's bytes: read once, so what is checked statically is what gets imported."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise KernelFileError("cannot read %s: %s" % (path, e.strerror or e))


def read_static(path, source=None):
    """{"KERNEL_TYPE": ..., "TEST_SIZES": ..., ..., "kernel_fn_args": [...] or None}."""
    if source is None:
        source = read_source(path)
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as e:
            raise KernelFileError("%s is not UTF-8: %s" % (os.path.basename(path), e))
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        raise KernelFileError("%s:%s: %s" % (os.path.basename(path), e.lineno, e.msg))
    found = {"kernel_fn_args": None}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and target.id in CONTRACT:
            try:
                found[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                found[target.id] = DYNAMIC
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "kernel_fn":
            a = node.args
            found["kernel_fn_args"] = [p.arg for p in a.posonlyargs + a.args]
            found["kernel_fn_varargs"] = a.vararg is not None
    return found


def _import_failure(path, exc):
    name = os.path.basename(path)
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        if top == "triton":
            return ("%s imports triton, which %s cannot import: install Triton in that Python, or "
                    "bench a CPU kernel (--device cpu)" % (name, sys.executable))
        return "%s imports %s, which %s does not have" % (name, exc.name, sys.executable)
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            line = frame.lineno
    where = "%s:%s" % (name, line) if line else name
    return "%s: importing the kernel raised %s: %s" % (where, type(exc).__name__,
                                                        str(exc).strip().splitlines()[0] if str(exc).strip() else "")


def load_module(path):
    """Execute the kernel file as a brand-new module named _ak_kernel_<n>."""
    for old in [k for k in sys.modules if k.startswith(_PREFIX)]:
        del sys.modules[old]            # drop earlier kernels (and whatever memory they cache)
    name = "%s%d_%d" % (_PREFIX, next(_counter), os.getpid())
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
    if spec is None or spec.loader is None:
        raise KernelFileError("cannot load %s as a Python module" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # Triton's @jit needs the module importable by name
    try:
        spec.loader.exec_module(module)
    except KernelFileError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure of user code is reported, not raised
        del sys.modules[name]
        raise KernelFileError(_import_failure(path, e)) from e
    fn = getattr(module, "kernel_fn", None)
    if not callable(fn):
        raise KernelFileError("%s defines no callable kernel_fn" % os.path.basename(path))
    return module
