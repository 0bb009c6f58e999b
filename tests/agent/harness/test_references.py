"""Every op's reference path and every CPU starter pass every stage; the contract overrides
(TEST_SIZES, TEST_DTYPES, TOLERANCES) are honoured; extract and describe work."""

import ast
import json
import os
import subprocess
import sys
import time
import unittest

from harnesstest import PYDIR, STARTERS, TempDirMixin, run, stage_names, write_kernel

from harness.contract import rules
from harness import extract, ops

ALL_STAGES = list(rules.ALL_STAGES)


class ReferencePaths(TempDirMixin, unittest.TestCase):
    def test_every_reference_passes_every_stage(self):
        for name in ops.OPS:
            with self.subTest(op=name):
                path = write_kernel(self.tmp, "ref_%s.py" % name, """
                    import harness.ops
                    KERNEL_TYPE = "%s"
                    _ref = harness.ops.get(KERNEL_TYPE).reference
                    def kernel_fn(*args):
                        return _ref(*args)
                    """ % name)
                r = run(path)
                self.assertEqual(r["status"], "ok", r["failure"])
                self.assertTrue(r["correct"])
                self.assertEqual(stage_names(r), ALL_STAGES)
                self.assertTrue(all(s["passed"] for s in r["stages"]))
                # The reference against itself: a paired ratio near 1 (wide band: shared CI cores).
                # A quick bench of a 100 us kernel on two cores shared with another suite once read
                # 0.37 (when the CPU's fills left it five rounds); the full bench, which times until
                # its medians settle, is the one asked to land in the band then.
                if not 0.5 < r["speedup"] < 2.0:
                    r = run(path, quick=False)
                self.assertGreater(r["speedup"], 0.5)
                self.assertLess(r["speedup"], 2.0)


class CpuStarters(unittest.TestCase):
    def test_every_cpu_starter_passes_every_stage(self):
        for name in ops.OPS:
            with self.subTest(op=name):
                r = run(os.path.join(STARTERS, "cpu", name + ".py"))
                self.assertEqual(r["status"], "ok", r["failure"])
                self.assertEqual(stage_names(r), ALL_STAGES)
                for key in ("latency_us", "ref_latency_us", "speedup", "tflops", "gbps",
                            "arithmetic_intensity", "noise_pct"):
                    self.assertGreater(r[key], 0, key)
                self.assertEqual(r["kernel_type"], name)
                self.assertFalse(r["timing"]["cold_l2"])
                self.assertGreater(r["timing"]["checked_calls"], 0)

    def test_quick_mode_checks_the_quick_sizes_only(self):
        # What makes quick mode quick is the work it does, asserted here; its seconds are a benchmark's
        # (docs/benchmarks.md, judge overhead), not a unit test's: a busy CI machine must not fail it.
        # The 60 s ceiling only catches a hang.
        for name in ("softmax", "rmsnorm", "matmul"):
            with self.subTest(op=name):
                t0 = time.perf_counter()
                r = run(os.path.join(STARTERS, "cpu", name + ".py"))
                self.assertEqual(r["status"], "ok", r["failure"])
                self.assertTrue(r["quick"])
                spec = ops.get(name)
                self.assertEqual(r["timing_size"], spec.headline["quick"])
                sizes = next(s for s in r["stages"] if s["name"] == "sizes")["detail"]
                self.assertIn(spec.size_label(spec.sizes["quick"][-1]), sizes)
                for size in spec.sizes["cpu"]:
                    if size not in spec.sizes["quick"]:
                        self.assertNotIn(spec.size_label(size), sizes)
                self.assertLess(time.perf_counter() - t0, 60.0)

    def test_full_cpu_sizes(self):
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"), quick=False)
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["timing_size"], ops.get("softmax").headline["cpu"])
        self.assertIn("1024x4096", next(s for s in r["stages"] if s["name"] == "sizes")["detail"])

    def test_roofline_with_peaks(self):
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"),
                peaks={"tflops": {"fp32": 1.0}, "bandwidth_gbs": 50.0})
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["bound"], "memory")            # 2.5 flop/byte < ridge of 20
        self.assertAlmostEqual(r["pct_peak"], 100.0 * r["gbps"] / 50.0, places=6)


class Overrides(TempDirMixin, unittest.TestCase):
    def test_extracted_kernel_carries_model_shapes_and_dtype(self):
        out = extract.handle({"op_type": "rmsnorm", "device": "cpu", "dtype": "bf16",
                              "shapes": [[3, 40, 96], [96]], "name": "model.layers.0.norm"})
        self.assertEqual(out["test_sizes"], [{"M": 120, "N": 96}])
        path = write_kernel(self.tmp, "kernel.py", out["kernel_py"])
        r = run(path)
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["dtype"], "bfloat16")
        self.assertEqual(r["test_dtypes"], ["bfloat16"])
        self.assertEqual(r["timing_size"], {"M": 120, "N": 96})
        model = next(s for s in r["stages"] if s["name"] == "model_shapes")
        self.assertIn("120x96", model["detail"])

    def test_extract_several_calls_and_bad_shapes(self):
        out = extract.handle({"op_type": "matmul", "device": "cuda", "dtype": "bfloat16",
                              "shapes": [[[8, 64], [64, 32]], [[16, 64], [64, 32]]]})
        self.assertEqual(out["test_sizes"], [{"M": 8, "N": 32, "K": 64}, {"M": 16, "N": 32, "K": 64}])
        self.assertIn("import triton", out["kernel_py"])
        self.assertIn("TEST_DTYPES = ['bfloat16']", out["kernel_py"])
        with self.assertRaisesRegex(ValueError, "inner dimensions"):
            extract.handle({"op_type": "matmul", "device": "cpu", "shapes": [[8, 64], [63, 32]]})
        with self.assertRaisesRegex(ValueError, "unknown KERNEL_TYPE"):
            extract.handle({"op_type": "conv9d", "device": "cpu", "shapes": []})

    def test_tightened_tolerance_is_honoured(self):
        path = write_kernel(self.tmp, "tight.py", """
            import torch
            KERNEL_TYPE = "matmul"
            TOLERANCES = {"float32": {"atol": 0.0, "rtol": 0.0}}
            def kernel_fn(A, B):
                return torch.matmul(A, B)
            """)
        r = run(path)
        self.assertEqual(r["status"], "incorrect")
        self.assertIn("atol 0, rtol 0", r["failure"])

    def test_test_sizes_in_autokernel_form(self):
        # The timed size is big enough that its work stands well above the cost of a call that does
        # nothing (33x77 took ~30 us and once measured below the null calls on a loaded CI machine,
        # which the judge rightly reads as work done outside the timed calls).
        path = write_kernel(self.tmp, "sizes.py", """
            import torch
            KERNEL_TYPE = "softmax"
            TEST_SIZES = [("model", {"rows": 257, "cols": 1031}), [5, 9]]
            def kernel_fn(x):
                return torch.softmax(x, dim=-1)
            """)
        r = run(path)
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["timing_size"], {"rows": 257, "cols": 1031})
        detail = next(s for s in r["stages"] if s["name"] == "model_shapes")["detail"]
        self.assertIn("257x1031", detail)
        self.assertIn("5x9", detail)

    def test_bad_contract_is_an_error_naming_the_cause(self):
        cases = {
            "no_type.py": ("def kernel_fn(x):\n    return x\n", "declares no KERNEL_TYPE"),
            "syntax.py": ("KERNEL_TYPE = 'softmax'\ndef kernel_fn(x)\n", "syntax.py:2"),
            "unknown.py": ("KERNEL_TYPE = 'conv9d'\ndef kernel_fn(x):\n    return x\n", "unknown KERNEL_TYPE"),
            "no_fn.py": ("KERNEL_TYPE = 'softmax'\n", "defines no kernel_fn"),
            "bad_sizes.py": ("KERNEL_TYPE = 'softmax'\nTEST_SIZES = [[1, 2, 3]]\ndef kernel_fn(x):\n"
                             "    return x\n", "TEST_SIZES"),
            "dyn.py": ("KERNEL_TYPE = 'softmax'\nTEST_SIZES = [[2 ** 3, 4]] * int('1')\n"
                       "def kernel_fn(x):\n    return x\n", "must be literal"),
            "triton.py": ("import triton_not_installed_here as triton\nKERNEL_TYPE = 'softmax'\n"
                          "def kernel_fn(x):\n    return x\n", "triton_not_installed_here"),
            "raises.py": ("KERNEL_TYPE = 'softmax'\nraise RuntimeError('boom')\ndef kernel_fn(x):\n"
                          "    return x\n", "raises.py:2"),
        }
        for fname, (src, needle) in cases.items():
            with self.subTest(file=fname):
                r = run(write_kernel(self.tmp, fname, src))
                self.assertEqual(r["status"], "error")
                self.assertFalse(r["correct"])
                self.assertIn(needle, r["failure"])
                self.assertEqual(r["stages"][0]["name"], "import")
        r = run(os.path.join(self.tmp, "missing.py"))
        self.assertEqual(r["status"], "error")
        self.assertIn("cannot read", r["failure"])
        self.assertEqual(run(os.path.join(STARTERS, "cpu", "softmax.py"), device="tpu")["status"], "error")

    def test_kernel_exception_is_incorrect_with_stage(self):
        path = write_kernel(self.tmp, "boom.py", """
            KERNEL_TYPE = "softmax"
            def kernel_fn(x):
                raise ValueError("shape not supported")
            """)
        r = run(path)
        self.assertEqual(r["status"], "incorrect")
        self.assertTrue(r["failure"].startswith("smoke: "))
        self.assertIn("ValueError: shape not supported", r["failure"])


class Specs(unittest.TestCase):
    def test_every_spec_is_complete(self):
        for name, spec in ops.OPS.items():
            with self.subTest(op=name):
                self.assertEqual(set(spec.tolerances), {"float32", "float16", "bfloat16"})
                for mode in ("cuda", "cpu", "quick"):
                    self.assertGreaterEqual(len(spec.sizes[mode]), 2)
                    self.assertTrue(spec.odd_sizes[mode])
                    for s in spec.sizes[mode] + spec.odd_sizes[mode] + [spec.headline[mode]]:
                        self.assertEqual(spec.normalize_size(s), s)
                    self.assertEqual(set(spec.secret_ranges[mode]), set(spec.dims))
                s = spec.headline["cuda"]
                self.assertGreater(spec.flops(s), 0)
                self.assertGreater(spec.bytes(s, 2), 0)
                self.assertEqual(len(spec.args), len(spec.arg_shapes))

    def test_normalize_size_forms(self):
        spec = ops.get("matmul")
        want = {"M": 2, "N": 3, "K": 4}
        self.assertEqual(spec.normalize_size([2, 3, 4]), want)
        self.assertEqual(spec.normalize_size(("label", want)), want)
        for bad in ([2, 3], {"M": 2, "N": 3}, [2, 3, 0], [2, 3, 4.5], "2x3x4"):
            with self.assertRaises(ValueError):
                spec.normalize_size(bad)
        with self.assertRaisesRegex(ValueError, "even"):
            ops.get("rotary_embedding").normalize_size([1, 1, 4, 7])
        self.assertIs(ops.get("attention"), ops.get("flash_attention"))

    def test_describe_needs_no_torch_and_is_json(self):
        code = ("import json, sys; import harness.describe as d; text = json.dumps(d.describe()); "
                "assert 'torch' not in sys.modules, 'describe imported torch'; print(len(text))")
        env = dict(os.environ, PYTHONPATH=PYDIR)
        subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
        out = subprocess.run([sys.executable, "-m", "harness.describe"], check=True, env=env,
                             capture_output=True, text=True).stdout
        data = json.loads(out)
        self.assertEqual(set(data["ops"]), set(ops.OPS))
        sm = data["ops"]["softmax"]
        self.assertEqual(sm["tolerances"]["bfloat16"], {"atol": 2e-3, "rtol": 2e-3})
        self.assertEqual(sm["headline"]["cuda"], {"rows": 4096, "cols": 4096})
        self.assertEqual(sm["flops"], "5*rows*cols")
        self.assertEqual(data["keep_rule"]["min_improvement_pct"], 1.0)
        self.assertEqual([s["name"] for s in data["stages"]], ALL_STAGES)
        self.assertEqual(set(sm["starters"]), {"cpu", "triton"})


class StarterFiles(unittest.TestCase):
    """Static contract of every starter: what the tune agent and the static check rely on."""

    def test_starters_follow_the_contract(self):
        for kind in ("cpu", "triton"):
            for name, spec in ops.OPS.items():
                with self.subTest(kind=kind, op=name):
                    path = os.path.join(STARTERS, kind, name + ".py")
                    with open(path, encoding="utf-8") as f:
                        tree = ast.parse(f.read(), filename=path)
                    assigned, counts, fn_args, defaults = {}, {}, None, 0
                    for node in tree.body:
                        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                            n = node.targets[0].id
                            assigned[n] = node.value
                            counts[n] = counts.get(n, 0) + 1
                        if isinstance(node, ast.FunctionDef) and node.name == "kernel_fn":
                            fn_args = [a.arg for a in node.args.args]
                            defaults = len(node.args.defaults)
                    self.assertEqual(ast.literal_eval(assigned["KERNEL_TYPE"]), name)
                    # The default contract's arguments; an argument only some contracts pass (matmul's
                    # bias) comes last, with a default.
                    self.assertEqual(fn_args[:len(spec.args)], list(spec.args))
                    self.assertLessEqual(len(fn_args) - len(spec.args), defaults)
                    space = ast.literal_eval(assigned["TUNE_SPACE"])
                    self.assertTrue(space)
                    for const, candidates in space.items():
                        self.assertRegex(const, r"^[A-Z][A-Z0-9_]*$")
                        self.assertEqual(counts.get(const), 1, const)
                        value = ast.literal_eval(assigned[const])
                        self.assertIsInstance(value, int)
                        self.assertIn(value, candidates, const)


if __name__ == "__main__":
    unittest.main()


class SdpaScale(unittest.TestCase):
    """The attention reference takes SDPA's own `scale=` where torch has it (2.1 on), also when inspect
    finds no signature for the builtin (torch 2.x): else every explicit scale ran the math path."""

    def test_builtin_without_signature_decided_by_version(self):
        from harness.ops.flash_attention import _sdpa_takes_scale

        class Builtin:      # inspect.signature raises ValueError for it, as for torch's builtin
            __signature__ = property(lambda self: (_ for _ in ()).throw(ValueError("no signature")))

            def __call__(self, *a, **kw):
                return None

        sdpa = Builtin()
        self.assertTrue(_sdpa_takes_scale(sdpa, "2.11.0+cu130"))
        self.assertTrue(_sdpa_takes_scale(sdpa, "2.1.0"))
        self.assertFalse(_sdpa_takes_scale(sdpa, "2.0.1"))
        self.assertFalse(_sdpa_takes_scale(sdpa, "nightly"))

    def test_a_signature_decides_when_there_is_one(self):
        from harness.ops.flash_attention import _sdpa_takes_scale

        def with_scale(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
            return None

        def without(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False):
            return None

        self.assertTrue(_sdpa_takes_scale(with_scale, "2.0.0"))
        self.assertFalse(_sdpa_takes_scale(without, "2.11.0"))
