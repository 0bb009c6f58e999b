"""The `extract` worker op: a starter kernel.py for an op type and device, with the model's own
shapes and dtype written in as TEST_SIZES / TEST_DTYPES (the harness times TEST_SIZES[0]).

args {op_type, device: cpu|cuda, dtype, shapes: [[...], ...] (one call's input shapes) or a list
of such lists (several calls), name, sites?: [call facts, ...] (profile.json's call_sites[i].call),
attrs?: {...} (explicit attributes, over those the sites give)}
-> {"kernel_py": text, "kernel_type", "test_sizes", "starter",
    "contract": {"op_type", "attrs", "refused"}}

The contract attributes come from the op's contract_from_sites (docs/contracts.md) and are written
into kernel.py as a `CONTRACT = {...}` literal right after KERNEL_TYPE. A refused contract (its
reason in "refused") still gets a kernel.py; the caller marks the folder not pluggable.
"""

import os
import re

from . import ops
from .contract.dtypes import canonical

STARTERS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "starters")


def _calls(shapes):
    """One call's shapes ([[4096, 4096]]) or several calls' ([[[4096, 4096]], [[8, 1024]]])."""
    if not shapes:
        return []
    if not isinstance(shapes, (list, tuple)):
        raise ValueError("shapes must be a list of input shapes")
    first = shapes[0]
    if isinstance(first, (list, tuple)) and first and isinstance(first[0], (list, tuple)):
        return [list(c) for c in shapes]
    return [list(shapes)]


def model_sizes(spec, shapes):
    sizes = []
    for call in _calls(shapes):
        try:
            size = spec.normalize_size(spec.from_shapes(call))
        except (ValueError, IndexError, TypeError) as e:
            raise ValueError("extract: %s shapes %r do not fit %s: %s"
                             % (spec.name, call, ", ".join(spec.arg_shapes), e))
        if size not in sizes:
            sizes.append(size)
    return sizes


def render(spec, device, dtype, sizes, name, attrs=None):
    kind = "triton" if device == "cuda" else "cpu"
    path = os.path.join(STARTERS_DIR, kind, spec.name + ".py")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = ["", "# The model's call: its contract attributes (docs/contracts.md). Leave as written: the "
             "judge checks",
             "# the kernel against these and the folder's contract must match them.",
             "CONTRACT = %r" % (dict(spec.attrs if attrs is None else attrs),),
             '', '# Extracted for %s: the model\'s own shapes (timed first) and dtype.' % (name or spec.name)]
    if sizes:
        lines.append("TEST_SIZES = [")
        lines += ["    %r," % (dict(s),) for s in sizes]
        lines.append("]")
    lines.append("TEST_DTYPES = [%r]" % canonical(dtype))
    block = "\n".join(lines) + "\n"
    pattern = re.compile(r'^KERNEL_TYPE = "[^"]*"\n', re.MULTILINE)
    if not pattern.search(text):
        raise ValueError("starter %s has no KERNEL_TYPE line" % path)
    return pattern.sub(lambda m: m.group(0) + block, text, count=1), "%s/%s.py" % (kind, spec.name)


def handle(args, ctx=None):
    args = args or {}
    try:
        spec = ops.get(args.get("op_type", ""))
    except KeyError as e:
        raise ValueError("extract: %s" % e.args[0])
    device = str(args.get("device") or "cpu").lower()
    if device not in ("cpu", "cuda"):
        raise ValueError("extract: device %r is not cpu or cuda" % device)
    dtype = args.get("dtype") or ("bfloat16" if device == "cuda" else "float32")
    sizes = model_sizes(spec, args.get("shapes"))
    sites = args.get("sites")
    if sites is not None and not isinstance(sites, list):
        raise ValueError("extract: sites must be a list of call facts")
    attrs, refused = spec.contract_from_sites(sites or [])
    explicit = args.get("attrs")
    if explicit:
        if not isinstance(explicit, dict):
            raise ValueError("extract: attrs must be an object")
        try:
            attrs = spec.check_attrs(dict(attrs, **explicit))
        except ValueError as e:
            raise ValueError("extract: %s" % e)
    text, starter = render(spec, device, dtype, sizes, args.get("name", ""), attrs)
    return {"kernel_py": text, "kernel_type": spec.name, "test_sizes": sizes, "starter": starter,
            "contract": {"op_type": spec.name, "attrs": attrs, "refused": refused}}
