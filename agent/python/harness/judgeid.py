"""Which judge measured a result: its version (a hash of the harness's Python sources) and how it
isolated the kernel. Recorded with every result (docs/numbers.md), so a number says what judged it.
"""

import hashlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
# Starters are kernels the loop begins from, not part of the judge: editing one changes no verdict.
NOT_JUDGE = ("starters", "__pycache__")
_versions = {}


def version(root=HERE):
    """12 hex digits of a SHA-256 over every .py file under root (relative path and bytes, in path
    order), starters left out. The same sources give the same hash on any machine."""
    root = os.path.abspath(root)
    if root not in _versions:
        _versions[root] = compute(root)
    return _versions[root]


def compute(root):
    h = hashlib.sha256()
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in NOT_JUDGE)
        files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    for path in sorted(files, key=lambda p: os.path.relpath(p, root)):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, "rb") as f:
            data = f.read()
        h.update(b"%d:%s\n%d:" % (len(rel), rel.encode(), len(data)))
        h.update(data)
    return h.hexdigest()[:12]


def isolation_level(described):
    """One line from a sandbox's describe(): "bubblewrap+cgroup v2", "process+cgroup v1",
    "bubblewrap, no cgroup", "process, no cgroup" (the last three weaker than the first)."""
    d = described or {}
    kind = d.get("sandbox") or "unknown"
    group = d.get("cgroup")
    return "%s+cgroup %s" % (kind, group) if group else "%s, no cgroup" % kind


def identity(described):
    return {"version": version(), "isolation": isolation_level(described)}
