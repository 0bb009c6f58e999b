"""Every cheating kernel in cheaters/ is caught, at the right stage, for the right reason."""

import ast
import importlib.util
import os
import re
import unittest

import torch
import torch.nn.functional as F

from harnesstest import CHEATERS, STARTERS, run

import test_isolation

# cheater file -> (status, failing stage, text the failure must contain)
EXPECTED = {
    "reuse_output.py": ("incorrect", "sizes", "same tensor object"),
    "cache_by_address.py": ("incorrect", "sizes", "outside tolerance"),
    "after_n_calls.py": ("incorrect", "timing", "timed call"),
    "mutate_input.py": ("incorrect", "smoke", "modified its input `x`"),
    "alias_output.py": ("incorrect", "odd_sizes", "shares memory with input `x`"),
    "deferred_thread.py": ("incorrect", "smoke", "deferred to another thread"),
    "patch_torch.py": ("incorrect", "import", "torch.softmax was replaced"),
    "patch_torch_lazy.py": ("incorrect", "smoke", "torch.nn.functional.softmax was replaced"),
    "patch_timer.py": ("incorrect", "import", "time.perf_counter_ns was replaced"),
    "precision_downgrade.py": ("incorrect", "smoke", "outside tolerance"),
    "shape_special.py": ("incorrect", "odd_sizes", "outside tolerance"),
    "nan_output.py": ("incorrect", "hostile", "NaN"),
    "uninit_memory.py": ("incorrect", "smoke", "NaN"),
    "impossible_throughput.py": ("incorrect", "plausibility", "physical fp32 peak"),
    "flag_leak.py": ("incorrect", "smoke", "num_threads changed"),
    "overwrite_previous.py": ("incorrect", "sizes", "same tensor object"),
    "loosened_tolerance.py": ("error", "import", "more than 10x the default"),
}
TINY_PEAKS = {"tflops": {"fp32": 1e-6}, "bandwidth_gbs": 1e-3}


class AntiCheat(unittest.TestCase):
    def bench(self, fname):
        args = {"peaks": TINY_PEAKS} if fname.startswith("impossible") else {}
        return run(os.path.join(CHEATERS, fname), **args)

    def test_every_cheater_has_an_expectation(self):
        files = {f for f in os.listdir(CHEATERS) if f.endswith(".py")}
        self.assertEqual(files, set(EXPECTED) | test_isolation.COVERED)

    def test_every_judge_module_an_attack_names_exists(self):
        # An attack that looks a judge module up by name ("harness.runners.runner") does nothing once
        # that module is moved or renamed, and would then "be caught" without ever having attacked.
        named = {}
        for fname in sorted(os.listdir(CHEATERS)):
            if fname.endswith(".py"):
                with open(os.path.join(CHEATERS, fname)) as f:
                    tree = ast.parse(f.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                            and re.fullmatch(r"harness(\.\w+)+", node.value):
                        named.setdefault(node.value, fname)
        self.assertGreaterEqual(len(named), 5, named)
        for module, fname in sorted(named.items()):
            with self.subTest(module=module, cheater=fname):
                self.assertIsNotNone(importlib.util.find_spec(module), "%s names %s" % (fname, module))

    def test_every_cheater_is_caught(self):
        for fname, (status, stage, needle) in sorted(EXPECTED.items()):
            with self.subTest(cheater=fname):
                r = self.bench(fname)
                self.assertFalse(r["correct"])
                self.assertEqual(r["status"], status, r["failure"])
                self.assertTrue(r["failure"].startswith(stage + ":"), r["failure"])
                self.assertIn(needle, r["failure"])
                failed = [s for s in r["stages"] if not s["passed"]]
                self.assertEqual([s["name"] for s in failed], [stage])
                self.assertNotIn("latency_us", r)           # no numbers for a rejected kernel

    def test_the_judges_torch_is_never_touched_and_the_next_bench_is_clean(self):
        original_softmax, original_fsoftmax = torch.softmax, F.softmax
        threads = torch.get_num_threads()
        for fname in ("patch_torch.py", "patch_torch_lazy.py", "patch_timer.py", "flag_leak.py"):
            self.bench(fname)
            self.assertIs(torch.softmax, original_softmax)
            self.assertIs(F.softmax, original_fsoftmax)
            self.assertEqual(torch.get_num_threads(), threads)
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        self.assertEqual(r["status"], "ok", r["failure"])

    def test_secret_sizes_change_with_the_seed(self):
        def odd_sizes(seed):
            r = run(os.path.join(STARTERS, "cpu", "softmax.py"), seed=seed)
            self.assertEqual(r["seed"], seed)
            detail = next(s for s in r["stages"] if s["name"] == "odd_sizes")["detail"]
            return detail.split(";")[0]          # "3 cases (7x129, 23x301" : sizes only
        self.assertEqual(odd_sizes(1), odd_sizes(1))
        self.assertNotEqual(odd_sizes(1), odd_sizes(2))


if __name__ == "__main__":
    unittest.main()
