"""What each number is measured against (#43 items 1, 2, 7; docs/numbers.md): the measured roofs of
the device (here the CPU's memory and matmul), the compiled PyTorch baseline (absent, and said so, on
a torch without torch.compile), and the judge's identity recorded with a result."""

import math
import os
import shutil
import sys
import time
import unittest

import torch

import harnesstest
from harnesstest import STARTERS, TempDirMixin, run

PROFILER_PY = os.path.join(harnesstest.ROOT, "profiler", "python")
if PROFILER_PY not in sys.path:
    sys.path.insert(0, PROFILER_PY)

import akroofs  # noqa: E402
from harness import judgeid, ops  # noqa: E402
from harness.timing import compiled, roofline  # noqa: E402
from harness.checks import plan  # noqa: E402

SMALL = {"device": "cpu", "dtype": "fp32", "copy_bytes": 32 << 20, "matmul_sizes": [128, 256], "repeats": 3}


class MeasuredRoofsOnCpu(TempDirMixin, unittest.TestCase):
    def roofs(self, **more):
        args = dict(SMALL, cache_path=os.path.join(self.tmp, "cache", "roofs.json"))
        args.update(more)
        return akroofs.handle(args)

    def test_measures_the_cpu_memory_and_matmul(self):
        r = self.roofs()
        self.assertFalse(r["cached"])
        self.assertEqual(r["device"], "cpu")
        self.assertEqual(r["dtype"], "fp32")
        # A copy of the same buffer timed here, independently: the op's number is of that order.
        n = (32 << 20) // 4
        src, dst = torch.ones(n), torch.empty(n)
        dst.copy_(src)
        best = min(self._timed(lambda: dst.copy_(src)) for _ in range(3))
        direct = 2.0 * n * 4 / best / 1e9
        self.assertGreater(r["bandwidth_gbs"], direct / 5)
        self.assertLess(r["bandwidth_gbs"], direct * 5)
        self.assertEqual(r["bandwidth_gbs"], r["copy"]["gbs"])
        self.assertGreater(r["tflops"]["fp32"], 0)
        self.assertEqual(r["tflops"]["fp32"], max(r["matmul"]["sizes"].values()))
        self.assertIn("dtype=fp32", r["key"])
        self.assertIn("torch=%s" % torch.__version__, r["key"])

    @staticmethod
    def _timed(fn):
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    def test_cached_per_key_and_measured_again_on_demand(self):
        first = self.roofs()
        again = self.roofs()
        self.assertTrue(again["cached"])
        self.assertEqual(again["bandwidth_gbs"], first["bandwidth_gbs"])
        self.assertEqual(again["measured_at"], first["measured_at"])
        forced = self.roofs(force=True)
        self.assertFalse(forced["cached"])
        self.assertNotEqual(forced["copy"]["samples_gbs"], first["copy"]["samples_gbs"])
        other = self.roofs(dtype="bf16", matmul_sizes=[64])
        self.assertFalse(other["cached"])         # another dtype is another roof
        self.assertNotEqual(other["key"], first["key"])
        self.assertIn("bf16", other["tflops"])

    def test_a_bad_dtype_is_named(self):
        with self.assertRaisesRegex(ValueError, "dtype 'int3'"):
            self.roofs(dtype="int3")


class PercentOfRoof(unittest.TestCase):
    SPEC = {"tflops": {"bf16": 989.0}, "bandwidth_gbs": 3350.0}

    def metrics(self, peaks):
        spec = ops.get("rmsnorm")
        size = spec.headline["cuda"]
        return roofline.metrics(spec, size, "bf16", 100.0, peaks)

    def test_measured_roof_with_the_spec_beside_it(self):
        measured = dict(self.SPEC, measured={"bandwidth_gbs": 3010.0, "tflops": {"bf16": 700.0}})
        m = self.metrics(measured)
        self.assertEqual(m["bound"], "memory")
        self.assertEqual(m["roof"], "measured")
        self.assertAlmostEqual(m["pct_peak"], 100.0 * m["gbps"] / 3010.0)
        self.assertAlmostEqual(m["pct_peak_spec"], 100.0 * m["gbps"] / 3350.0)
        self.assertAlmostEqual(m["pct_peak"] / m["pct_peak_spec"], 3350.0 / 3010.0)

    def test_spec_only_when_nothing_was_measured(self):
        m = self.metrics(self.SPEC)
        self.assertEqual(m["roof"], "spec")
        self.assertEqual(m["pct_peak"], m["pct_peak_spec"])

    def test_cpu_has_only_the_measured_roof(self):
        m = self.metrics({"measured": {"bandwidth_gbs": 10.0, "tflops": {"bf16": 0.5}}})
        self.assertEqual(m["roof"], "measured")
        self.assertTrue(m["pct_peak"] > 0)
        self.assertTrue(math.isnan(m["pct_peak_spec"]))


class CompiledBaseline(unittest.TestCase):
    def setUp(self):
        compiled._cache.clear()
        spec = ops.get("softmax")
        self.spec = spec
        self.case = plan.Case("timing", spec, spec.headline["quick"], "fp32", "normal", 7).materialize("cpu")

    @unittest.skipIf(callable(getattr(torch, "compile", None)), "this torch has torch.compile")
    def test_absent_and_said_without_torch_compile(self):
        out = compiled.baseline(self.spec, self.case, "cpu", 50.0, 170.0)
        self.assertTrue(math.isnan(out["compile_latency_us"]))
        self.assertFalse(out["compile"]["available"])
        self.assertEqual(out["compile"]["note"], "not available (torch %s has no torch.compile)"
                         % torch.__version__.split("+")[0])

    def test_compiled_time_is_carried_onto_the_paired_scale_and_cached(self):
        calls = []

        def fake_compile(fn, mode):           # a "compiled" reference that does the work twice
            calls.append(mode)
            return lambda *a: (fn(*a), fn(*a))[1]

        saved = getattr(torch, "compile", None)
        torch.compile = fake_compile
        try:
            out = compiled.baseline(self.spec, self.case, "cpu", 50.0, 170.0)
            again = compiled.baseline(self.spec, self.case, "cpu", 80.0, 170.0)
        finally:
            if saved is None:
                del torch.compile
            else:
                torch.compile = saved
        self.assertEqual(calls, ["max-autotune"])        # once per op, contract, size, dtype, device
        info = out["compile"]
        ratio = info["compiled_raw_us"] / info["eager_raw_us"]
        self.assertGreater(ratio, 1.3)
        self.assertAlmostEqual(out["compile_latency_us"], 50.0 * ratio)
        self.assertAlmostEqual(again["compile_latency_us"], 80.0 * ratio)

    def test_not_started_without_time_to_compile(self):
        saved = getattr(torch, "compile", None)
        torch.compile = lambda fn, mode: fn
        try:
            out = compiled.baseline(self.spec, self.case, "cpu", 50.0, 10.0)
        finally:
            if saved is None:
                del torch.compile
            else:
                torch.compile = saved
        self.assertIn("not measured: 10 s left", out["compile"]["note"])
        self.assertEqual(compiled._cache, {})             # the next bench tries again


class JudgeIdentity(TempDirMixin, unittest.TestCase):
    def test_hash_changes_with_a_harness_file_and_not_with_a_starter(self):
        copy = os.path.join(self.tmp, "harness")
        shutil.copytree(judgeid.HERE, copy, ignore=shutil.ignore_patterns("__pycache__"))
        before = judgeid.compute(copy)
        self.assertEqual(before, judgeid.compute(judgeid.HERE))     # the copy is the same judge
        self.assertRegex(before, r"^[0-9a-f]{12}$")
        starter = next(os.path.join(d, n) for d, _, ns in os.walk(os.path.join(copy, "starters"))
                       for n in ns if n.endswith(".py"))
        with open(starter, "a") as f:
            f.write("\n# a starter is not the judge\n")
        self.assertEqual(judgeid.compute(copy), before)
        # Every sub-package is the judge: a line more in any of its files is another judge.
        packages = sorted(d for d in os.listdir(copy) if os.path.isfile(os.path.join(copy, d, "__init__.py")))
        self.assertGreaterEqual(len(packages), 7, packages)     # contract, ops, ipc, isolation, runners, ...
        seen = {before}
        for package in packages + ["."]:
            with self.subTest(package=package):
                folder = os.path.join(copy, package)
                name = sorted(n for n in os.listdir(folder) if n.endswith(".py") and n != "__init__.py")[0]
                with open(os.path.join(folder, name), "a") as f:
                    f.write("\n# one more line\n")
                now = judgeid.compute(copy)
                self.assertNotIn(now, seen, os.path.join(package, name))
                seen.add(now)

    def test_isolation_levels(self):
        self.assertEqual(judgeid.isolation_level({"sandbox": "bubblewrap", "cgroup": "v2"}), "bubblewrap+cgroup v2")
        self.assertEqual(judgeid.isolation_level({"sandbox": "process", "cgroup": None}), "process, no cgroup")

    def test_a_bench_names_its_judge_and_its_compiled_baseline(self):
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        self.assertEqual(r["status"], "ok", r.get("failure"))
        self.assertEqual(r["judge"]["version"], judgeid.version())
        self.assertEqual(r["judge"]["isolation"], judgeid.isolation_level(r["isolation"]))
        self.assertIn("compile_latency_us", r)
        self.assertIn("note", r["compile"])
        if not callable(getattr(torch, "compile", None)):
            self.assertTrue(math.isnan(r["compile_latency_us"]))
            self.assertIn("not available", r["compile"]["note"])


if __name__ == "__main__":
    unittest.main()
