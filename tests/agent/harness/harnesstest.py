"""Shared helpers of the harness tests (imported by the test_*.py modules)."""

import os
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PYDIR = os.path.join(ROOT, "agent", "python")
if PYDIR not in sys.path:
    sys.path.insert(0, PYDIR)

CHEATERS = os.path.join(HERE, "cheaters")
STARTERS = os.path.join(PYDIR, "harness", "starters")


def run(path, **args):
    from harness import bench
    a = {"kernel_path": path, "device": "cpu", "quick": True}
    a.update(args)
    return bench.run(a)


def write_kernel(tmpdir, name, source):
    path = os.path.join(tmpdir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(source))
    return path


def stage_names(result):
    return [s["name"] for s in result["stages"]]


class TempDirMixin:
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()
