"""The cold re-check (issue 43 item 3) and a package that reproduces itself (item 4), on the CPU."""

import hashlib
import json
import os
import shutil
import tempfile
import unittest

from harnesstest import HERE, STARTERS

from harness import judgeid, recheck
from modelplug import export, pkgreproduce, provenance, reproduce

SUBJECTS = os.path.join(HERE, "precision")


class Statistic(unittest.TestCase):
    def test_tenth_percentile_decides(self):
        # 20 pairs, two slow ones: the inclusive 10th percentile sits between the 2nd and 3rd smallest.
        s = recheck.summary([1.2] * 18 + [0.9, 0.95])
        self.assertEqual(s["pairs"], 20)
        self.assertAlmostEqual(s["p10"], 0.95 + 0.9 * (1.2 - 0.95), places=9)
        self.assertTrue(s["offered"])
        # Three slow pairs in twenty: the tail is below 1, the median is not: withheld.
        s = recheck.summary([1.3] * 17 + [0.8, 0.85, 0.9])
        self.assertGreater(s["median"], 1.2)
        self.assertLess(s["p10"], 1.0)
        self.assertFalse(s["offered"])
        self.assertIn("10th percentile", s["why"])

    def test_exactly_one_is_not_above_one_and_too_few_pairs_cannot_be_judged(self):
        self.assertFalse(recheck.summary([1.0] * 20)["offered"])
        s = recheck.summary([3.0])
        self.assertFalse(s["offered"])
        self.assertIn("too few", s["why"])

    def test_comparison_with_the_recorded_spread(self):
        rec = {"p10": 1.05, "median": 1.1, "p90": 1.2}
        self.assertTrue(reproduce.compare(rec, {"median": 1.12})[0])
        ok, text = reproduce.compare(rec, {"median": 0.9})
        self.assertFalse(ok)
        self.assertIn("recorded 1.100x", text)


class ColdRecheck(unittest.TestCase):
    def test_a_slower_kernel_is_withheld_with_its_distribution(self):
        r = recheck.run({"kernel_path": os.path.join(SUBJECTS, "slow_softmax.py"), "device": "cpu", "pairs": 15})
        self.assertEqual(r["status"], "ok", r.get("failure"))
        self.assertGreaterEqual(r["pairs"], 15)
        self.assertEqual(len(r["ratios"]), r["pairs"])
        self.assertLess(r["p10"], 1.0)
        self.assertFalse(r["offered"])
        self.assertIn("not reliably faster", r["why"])

    def test_an_incorrect_kernel_is_withheld_naming_the_failure(self):
        r = recheck.run({"kernel_path": os.path.join(SUBJECTS, "fp16_accum_reduce.py"), "device": "cpu"})
        self.assertFalse(r["offered"])
        self.assertIn("precision", r["why"])


class Package(unittest.TestCase):
    """export writes provenance.json; reproduce re-measures it and compares; a changed kernel is caught."""

    _recorded = None

    @classmethod
    def _recheck(cls, src):
        """The distribution the verification recorded: a real re-check of the kernel (once), marked
        offered: what is tested here is what ships with it and how it is compared, not the verdict."""
        if cls._recorded is None:
            cls._recorded = recheck.run({"kernel_path": src, "device": "cpu", "pairs": 15})
            assert cls._recorded["status"] == "ok", cls._recorded.get("failure")
        return cls._recorded

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.run_dir = os.path.join(self.tmp, "run")
        kdir = os.path.join(self.run_dir, "kernels", "01-softmax")
        os.makedirs(kdir)
        src = os.path.join(STARTERS, "cpu", "softmax.py")
        shutil.copyfile(src, os.path.join(kdir, "kernel.py"))
        with open(src, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        rc = dict(self._recheck(src), offered=True)
        self.v = {"format": "autokernel-verification", "model_path": "/x/model.py", "device": "cpu",
                  "device_name": "cpu", "dtype": "float32", "torch": "1.13", "seeds": [3, 4],
                  "final_set": ["01-softmax"], "mode": "eager", "reps_per_sample": 2, "rounds": 3,
                  "timings": {"eager": {"median_us": 100.0, "samples_us": [100.0, 101.0, 99.0],
                                        "speedup_vs_eager": 1.0},
                              "eager+ours": {"median_us": 90.0, "samples_us": [90.0, 92.0, 88.0],
                                             "speedup_vs_eager": 1.11}},
                  "kernels": [{"kernel": "01-softmax", "op_type": "softmax", "sites": ["m"], "blob_sha256": sha,
                               "recheck": rc}],
                  "parity": {"ok": True}, "model_speedup": 1.11}
        self.out = os.path.join(self.tmp, "export")
        os.makedirs(self.out)
        export.handle({"run_dir": self.run_dir, "out_dir": self.out, "package": "pk", "verification": self.v})
        self.pkg = os.path.join(self.out, "pk")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_provenance_records_environment_judge_hashes_and_samples(self):
        with open(os.path.join(self.pkg, "provenance.json")) as f:
            p = json.load(f)
        self.assertEqual(p["format"], "autokernel-provenance")
        self.assertEqual(p["judge"]["version"], judgeid.version())
        self.assertEqual(p["environment"]["cpu"], provenance.cpu_model())
        self.assertTrue(p["environment"]["torch"])
        self.assertEqual(p["seeds"]["parity"], [3, 4])
        k = p["kernels"][0]
        self.assertEqual(k["sha256"], self.v["kernels"][0]["blob_sha256"])
        self.assertEqual(len(k["recheck"]["ratios"]), k["recheck"]["pairs"])
        self.assertEqual(p["model"]["variants"]["eager+ours"]["samples_us"], [90.0, 92.0, 88.0])
        self.assertEqual(len(p["model"]["ratios"]), 3)
        with open(os.path.join(self.out, "README.md")) as f:
            readme = f.read()
        self.assertIn("cold re-check", readme)
        self.assertIn("autokernel-cli reproduce", readme)

    def test_reproduce_re_measures_and_compares(self):
        r = reproduce.handle({"dir": self.out, "pairs": 15})
        self.assertTrue(r["same_device"])
        self.assertEqual(r["judge"]["recorded"], r["judge"]["here"])
        k = r["kernels"][0]
        self.assertGreaterEqual(k["measured"]["pairs"], 15)
        self.assertIn(k["text"].split(":")[0], ("agrees", "differs"))
        self.assertEqual(r["agree"], k["agree"])
        self.assertTrue(any(line.startswith("device: recorded") for line in r["lines"]))

    def test_a_changed_kernel_file_is_not_the_measured_one(self):
        with open(os.path.join(self.pkg, "kernels", "01_softmax.py"), "a") as f:
            f.write("\n# edited\n")
        r = reproduce.handle({"dir": self.out})
        self.assertFalse(r["agree"])
        self.assertIn("changed since export", r["kernels"][0]["text"])

    def test_a_kernel_the_recheck_withholds_is_not_packaged(self):
        v = dict(self.v, kernels=[dict(self.v["kernels"][0], recheck=dict(self.v["kernels"][0]["recheck"],
                                                                        offered=False, why="slow"))])
        out = os.path.join(self.tmp, "export2")
        os.makedirs(out)
        r = export.handle({"run_dir": self.run_dir, "out_dir": out, "package": "pk2", "verification": v})
        self.assertEqual(r["kernels"], [])
        with open(os.path.join(out, "README.md")) as f:
            self.assertIn("Withheld by the re-check at export: 01-softmax: slow", f.read())


class PackageReproduce(unittest.TestCase):
    """The package's own reproduce(): paired rounds of the model with and without its kernels."""

    def _prov(self, tmp, p10, p90, cpu):
        with open(os.path.join(tmp, "provenance.json"), "w") as f:
            json.dump({"environment": {"cpu": cpu}, "kernels": [{"kernel": "k"}],
                       "model": {"p10": p10, "median": (p10 + p90) / 2, "p90": p90, "reps_per_sample": 2}}, f)

    def test_agreement_and_another_device(self):
        import torch

        class Model(torch.nn.Module):
            fast = False

            def forward(self, x):
                for _ in range(1 if self.fast else 4):
                    y = x @ x
                return y

        model, x = Model(), torch.rand(192, 192)
        apply = lambda m: setattr(m, "fast", True)      # noqa: E731
        restore = lambda m: setattr(m, "fast", False)   # noqa: E731
        with tempfile.TemporaryDirectory() as tmp:
            self._prov(tmp, 1.5, 8.0, provenance.cpu_model())
            r = pkgreproduce.run(tmp, model, (x,), apply, restore, rounds=7)
            self.assertTrue(r["same_device"])
            self.assertGreater(r["median"], 1.5, r)
            self.assertTrue(r["agree"], r)
            self.assertIn("agrees", r["text"])
            self._prov(tmp, 0.9, 1.1, "another CPU")
            r = pkgreproduce.run(tmp, model, (x,), apply, restore, rounds=5)
            self.assertFalse(r["agree"])
            self.assertIn("another device", r["text"])


if __name__ == "__main__":
    unittest.main()
