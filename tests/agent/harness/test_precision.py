"""The precision probe (issue 43 item 5): a kernel that accumulates in 16 bits, or reads fp32 inputs
as TF32, is flagged and refused unless the run allows reduced precision; the starters are not."""

import os
import unittest

from harnesstest import HERE, STARTERS, run

from harness.checks import precision

SUBJECTS = os.path.join(HERE, "precision")


def subject(name):
    return os.path.join(SUBJECTS, name + ".py")


class PrecisionProbe(unittest.TestCase):
    def test_fp16_accumulation_is_refused_naming_the_shortcut(self):
        r = run(subject("fp16_accum_reduce"))
        self.assertEqual(r["status"], "incorrect")
        self.assertTrue(r["failure"].startswith("precision: "), r["failure"])
        self.assertIn("accumulates in float16", r["failure"])
        self.assertIn("--allow-reduced-precision", r["failure"])
        self.assertEqual([f["flag"] for f in r["precision"]["flags"]], ["reduced_accumulation"])
        self.assertFalse(r["precision"]["allowed"])

    def test_fp16_accumulation_passes_flagged_when_the_run_allows_it(self):
        r = run(subject("fp16_accum_reduce"), allow_reduced_precision=True)
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertTrue(r["precision"]["allowed"])
        self.assertEqual(r["precision"]["flags"][0]["dtype"], "float16")
        self.assertIn("allowed by the run", r["precision"]["text"])
        stage = [s for s in r["stages"] if s["name"] == "precision"][0]
        self.assertTrue(stage["passed"])
        self.assertIn("flagged", stage["detail"])

    def test_the_same_sum_accumulated_in_fp32_is_not_flagged(self):
        r = run(subject("fp32_accum_reduce"))
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["precision"]["flags"], [])
        self.assertEqual(r["precision"]["text"], "fp32 accumulation (probed: float16)")

    def test_bf16_accumulator_in_a_matmul_is_refused(self):
        r = run(subject("bf16_accum_matmul"))
        self.assertEqual(r["status"], "incorrect")
        self.assertIn("accumulates in bfloat16", r["failure"])

    def test_tf32_inputs_are_refused_even_with_loosened_tolerances(self):
        # Refused whatever the draw: at the 10x loosened limit a TF32 product still lands just
        # outside the smoke stage's tolerance on about a third of the draws.
        r = run(subject("tf32_matmul"))
        self.assertEqual(r["status"], "incorrect")
        # The draw of seed 1 passes smoke, so the precision stage is what refuses it, naming TF32.
        r = run(subject("tf32_matmul"), seed=1)
        self.assertEqual(r["status"], "incorrect")
        self.assertIn("TF32", r["failure"])
        self.assertEqual(r["precision"]["flags"][0]["flag"], "tf32")

    def test_starters_are_not_flagged(self):
        for name, dtype in (("matmul", "float32"), ("matmul", "bfloat16"), ("reduce", "float32"),
                            ("reduce", "float16")):
            with self.subTest(op=name, dtype=dtype):
                r = run(os.path.join(STARTERS, "cpu", name + ".py"), dtype=dtype)
                self.assertEqual(r["status"], "ok", r["failure"])
                self.assertTrue(r["precision"]["probed"])
                self.assertEqual(r["precision"]["flags"], [], r["precision"])

    def test_an_op_without_a_probe_says_so(self):
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertFalse(r["precision"]["probed"])
        self.assertIn("not probed", r["precision"]["text"])


class Classify(unittest.TestCase):
    """The statistic alone, on outputs made to order: fp32 accumulation then one rounding is never
    flagged; a 16-bit running sum and 10-bit inputs are."""

    def test_thresholds_separate_the_shortcuts(self):
        import torch
        gen = torch.Generator().manual_seed(7)
        x = precision._positive((64, precision.LONG), torch.float16, "cpu", gen)
        truth = x.double().sum(-1)
        exact = truth.to(torch.float16)
        self.assertIsNone(precision.classify(exact, truth, torch.float16)[0])
        acc = torch.zeros(64, dtype=torch.float16)
        for k0 in range(0, precision.LONG, 128):
            acc += x[:, k0:k0 + 128].float().sum(-1).half()
        self.assertEqual(precision.classify(acc, truth, torch.float16)[0], "reduced_accumulation")
        v = precision._fp32_bits((64, 1024), "cpu", gen)
        truth32 = v.double().sum(-1)
        self.assertIsNone(precision.classify(v.sum(-1), truth32, torch.float32)[0])
        tf32 = ((v.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)
        self.assertEqual(precision.classify(tf32.sum(-1), truth32, torch.float32)[0], "tf32")
        self.assertEqual(precision.classify(v.bfloat16().float().sum(-1), truth32, torch.float32)[0],
                         "fp32_in_16bit")


if __name__ == "__main__":
    unittest.main()
