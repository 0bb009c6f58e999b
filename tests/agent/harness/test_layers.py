"""The judge's rooms keep their order (docs/architecture.md, "The judge"): each sub-package of
agent/python/harness imports only sub-packages below it, never one beside or above it and never a
module at the top (the worker ops, recheck, judgeid), and no modules import each other in a circle.
Read from the sources' import statements (those inside functions included), so no torch is needed."""

import ast
import os
import unittest

from harnesstest import PYDIR

HARNESS = os.path.join(PYDIR, "harness")
# Floor of each sub-package: a room may import rooms of a lower floor only. The top-level modules
# stand above all of them. A new sub-package must be given its floor here (and in the docs).
FLOORS = {"contract": 0, "ipc": 0, "ops": 1, "isolation": 1, "runners": 2, "checks": 3, "timing": 4}
TOP = max(FLOORS.values()) + 1
NOT_JUDGE = ("starters", "__pycache__")


def modules():
    """{dotted name: path} of every judge module (starters left out)."""
    out = {}
    for folder, dirs, names in os.walk(HARNESS):
        dirs[:] = sorted(d for d in dirs if d not in NOT_JUDGE)
        for name in names:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, name), PYDIR)[:-3].replace(os.sep, ".")
                out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(folder, name)
    return out


def imports(name, path, known):
    """The judge modules `name` imports, each with the line that imports it."""
    package = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "harness"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "harness":
                continue
            for a in node.names:   # `from harness.x import y`: y is a module of its own, or a name of x
                sub = base + "." + a.name
                found.append((sub if sub in known else base, node.lineno))
    return found


def room(name):
    """'top' for harness/*.py, else the sub-package's name."""
    parts = name.split(".")
    if len(parts) > 2 or (len(parts) == 2 and os.path.isdir(os.path.join(HARNESS, parts[1]))):
        return parts[1]
    return "top"


def floor(r):
    return TOP if r == "top" else FLOORS[r]


class Layers(unittest.TestCase):
    def setUp(self):
        self.mods = modules()
        self.graph = {n: imports(n, p, self.mods) for n, p in self.mods.items()}

    def test_every_sub_package_has_a_floor(self):
        rooms = {room(n) for n in self.mods} - {"top"}
        self.assertEqual(rooms - set(FLOORS), set(), "a sub-package without a floor in FLOORS")
        self.assertEqual(set(FLOORS) - rooms, set(), "a floor for a sub-package that is gone")

    def test_no_room_imports_one_beside_or_above_it(self):
        wrong = []
        for name, targets in sorted(self.graph.items()):
            here = room(name)
            for target, line in targets:
                there = room(target)
                if here == "top" or here == there:
                    continue
                if floor(there) >= floor(here):
                    wrong.append("%s:%d imports %s (%s, floor %d, from %s on floor %d)"
                                 % (self.mods[name], line, target, there, floor(there), here, floor(here)))
        self.assertEqual(wrong, [])

    def test_no_circle_of_modules(self):
        state, stack, circles = {}, [], []

        def visit(n):
            state[n] = "open"
            stack.append(n)
            for target, _ in self.graph.get(n, ()):
                if target not in self.mods or target == n:
                    continue
                if state.get(target) == "open":
                    circles.append(stack[stack.index(target):] + [target])
                elif target not in state:
                    visit(target)
            stack.pop()
            state[n] = "done"

        for n in sorted(self.mods):
            if n not in state:
                visit(n)
        self.assertEqual(circles, [])

    def test_the_reading_sees_the_imports(self):
        # The rules above hold only if imports are read: the bench reaches every floor.
        reached = {room(t) for t, _ in self.graph["harness.bench"]}
        self.assertTrue({"ops", "isolation", "runners", "checks", "timing", "contract", "ipc"} <= reached, reached)
        self.assertIn("harness.ipc.cudashm", [t for t, _ in self.graph["harness.ipc.heap"]])
        self.assertIn("harness.contract.spec", [t for t, _ in self.graph["harness.ops.matmul"]])


if __name__ == "__main__":
    unittest.main()
