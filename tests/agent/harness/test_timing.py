"""Timing summary, keep decision, roofline bound, physical-peak rejection, the 10x flag."""

import unittest

from harnesstest import run  # noqa: F401 (sets sys.path)

from harness import ops
from harness.timing import roofline, stats


class KeepDecision(unittest.TestCase):
    def test_rule(self):
        keep = roofline.keep_decision
        self.assertTrue(keep(100.0, 98.0, 0.5)["keep"])        # 2% > max(1, 0.5)
        self.assertFalse(keep(100.0, 99.5, 0.1)["keep"])       # 0.5% < 1% floor
        self.assertFalse(keep(100.0, 98.0, 3.0)["keep"])       # 2% < 3% noise
        self.assertTrue(keep(100.0, 96.0, 3.0)["keep"])
        self.assertFalse(keep(100.0, 101.0, 0.0)["keep"])      # slower
        self.assertFalse(keep(100.0, 99.0, 0.0)["keep"])       # exactly 1% is not more than 1%
        self.assertFalse(keep(0.0, 50.0, 0.0)["keep"])
        d = keep(200.0, 150.0, None)
        self.assertAlmostEqual(d["improvement_pct"], 25.0)
        self.assertEqual(d["threshold_pct"], 1.0)

    def test_bench_reports_keep_when_given_a_best(self):
        import os
        from harnesstest import STARTERS
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"), best_latency_us=1e9)
        self.assertTrue(r["keep"]["keep"])
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"), best_latency_us=1e-3)
        self.assertFalse(r["keep"]["keep"])


class EarlyStop(unittest.TestCase):
    """A full bench's timing ends before its budget only when both medians are settled and enough
    timed calls were checked; quick benches never stop early (their budget is already short)."""

    def test_settled_rule(self):
        from harness.timing import rounds
        full, quick = rounds.BUDGETS[("cuda", False)], rounds.BUDGETS[("cuda", True)]
        steady = {"C": [110.0, 110.2, 109.9, 110.1] * 5, "R": [210.0, 210.3, 209.8, 210.1] * 5,
                  "N": [10.0] * 20}
        enough, few = rounds.SETTLED_MIN_CHECKS, rounds.SETTLED_MIN_CHECKS - 1
        self.assertTrue(rounds._settled(steady, full, enough))
        self.assertFalse(rounds._settled(steady, full, few))         # too few outputs checked yet
        self.assertFalse(rounds._settled(steady, quick, enough))     # no early stop in quick mode
        noisy = dict(steady, R=[150.0, 260.0, 190.0, 240.0] * 5)  # the reference is not settled
        self.assertFalse(rounds._settled(noisy, full, enough))
        # net of the null kernel: 1 us of jitter on a 2 us kernel is not settled, though it is on
        # its raw 102 us
        tiny = dict(steady, C=[102.0, 103.0, 101.0, 102.5] * 5, N=[100.0] * 20)
        self.assertFalse(rounds._settled(tiny, full, enough))


class FreshInputs(unittest.TestCase):
    """Every timed slot holds the pool window recorded for it, whether a round's inputs are written
    by one strided copy per argument or slot by slot (large inputs)."""

    def test_fill_writes_each_slots_recorded_window(self):
        import random
        import types
        import torch
        from harness.timing import rounds
        from harness.ipc import shm
        from harness.runners.caller import layout
        a = torch.arange(6, dtype=torch.float32).view(2, 3)
        b = torch.arange(5, dtype=torch.bfloat16)
        case = types.SimpleNamespace(inputs=(a, b), out_nbytes=lambda: 12)
        pools = types.SimpleNamespace(pools=[torch.randn(200), torch.randn(90).to(torch.bfloat16)],
                                      shapes=[(2, 3), (5,)], rng=random.Random(7))
        pools.draw = lambda: [pools.rng.randrange(0, 195), pools.rng.randrange(0, 86)]
        per = layout(0, case.inputs, 12)[2]
        for limit in (rounds.BATCHED_FILL_BYTES, 0):             # batched, then slot by slot
            arena = shm.create("cpu", 16 + 6 * per)
            slots = rounds.Slots(arena, 16, case, 6)
            arena.bytes().fill_(0xAB)
            old, rounds.BATCHED_FILL_BYTES = rounds.BATCHED_FILL_BYTES, limit
            try:
                slots.fill(pools, 5)
            finally:
                rounds.BATCHED_FILL_BYTES = old
            for k in range(5):
                for (offset, shape, _), pool, o in zip(slots.specs[k], pools.pools, slots.offsets[k]):
                    want = pool[o:o + rounds._numel(shape)].view(shape)
                    self.assertTrue(torch.equal(arena.tensor(offset, shape, pool.dtype), want), (limit, k))
            untouched = arena.tensor(slots.specs[5][0][0], [6], torch.float32).view(torch.int32)
            self.assertTrue(bool((untouched == untouched[0]).all()), "slot 5 was not in the round")
            self.assertEqual(len({tuple(o) for o in slots.offsets[:5]}), 5)


class HeldOutputs(unittest.TestCase):
    """The judge's reading of an output the kernel's process says it left in the heap (on CUDA a
    VMM allocation; the bounds rules are the same over a CPU arena): the offset is the process's
    word, so anything outside the heap or misaligned is the kernel's fault, never a read elsewhere."""

    def test_offsets_are_checked_against_the_heap(self):
        import torch
        from harness.runners import caller
        from harness.ipc import shm
        heap = shm.create("cpu", 4096)
        heap.tensor(512, [4, 8], torch.float32).copy_(torch.arange(32, dtype=torch.float32).view(4, 8))
        desc = {"type": "Tensor", "shape": [4, 8], "dtype": "float32", "device": "cuda", "held": True,
                "offset": 512, "nbytes": 128}
        got = caller.output_view(desc, None, None, heap, [4, 8], torch.float32)
        self.assertTrue(torch.equal(got, torch.arange(32, dtype=torch.float32).view(4, 8)))
        for bad in ({"offset": 4096 - 64}, {"offset": -128}, {"offset": 514}, {"offset": None},
                    {"nbytes": 64}, {"offset": "512"}):
            with self.subTest(bad=bad), self.assertRaises(caller.KernelFault):
                caller.output_view(dict(desc, **bad), None, None, heap, [4, 8], torch.float32)
        with self.assertRaises(caller.KernelFault):          # held, but no heap was given to the kernel
            caller.output_view(desc, None, None, None, [4, 8], torch.float32)
        region = shm.create("cpu", 4096)                       # an output the kernel copied: the region
        region.tensor(0, [4, 8], torch.float32).fill_(7.0)
        copied = dict(desc, held=False, copied=True)
        self.assertEqual(float(caller.output_view(copied, region, (0, 128), heap, [4, 8], torch.float32).sum()),
                         7.0 * 32)


class Summary(unittest.TestCase):
    def test_paired_speedup_and_noise(self):
        k = [10.0, 11.0, 10.0, 12.0, 10.0, 10.5]
        r = [20.0, 22.0, 20.0, 24.0, 20.0, 21.0]
        s = stats.summarize(k, r)
        self.assertAlmostEqual(s["speedup"], 2.0)
        self.assertAlmostEqual(s["latency_us"], 10.25)
        self.assertGreater(s["noise_pct"], 0)
        flat = stats.summarize([5.0] * 8, [5.0] * 8)
        self.assertEqual(flat["noise_pct"], 0.0)
        self.assertEqual(flat["speedup"], 1.0)


class Roofline(unittest.TestCase):
    PEAKS = {"tflops": {"fp32": 60.0, "tf32": 400.0, "bf16": 1000.0}, "bandwidth_gbs": 4000.0}

    def test_bound_and_pct(self):
        mm = ops.get("matmul")
        m = roofline.metrics(mm, {"M": 4096, "N": 4096, "K": 4096}, "bfloat16", 200.0, self.PEAKS)
        self.assertEqual(m["bound"], "compute")
        self.assertAlmostEqual(m["tflops"], 2 * 4096 ** 3 / 200e-6 / 1e12)
        self.assertAlmostEqual(m["pct_peak"], 100 * m["tflops"] / 1000.0)
        sm = ops.get("softmax")
        m = roofline.metrics(sm, {"rows": 4096, "cols": 4096}, "bfloat16", 20.0, self.PEAKS)
        self.assertEqual(m["bound"], "memory")
        self.assertAlmostEqual(m["gbps"], 2 * 4096 * 4096 * 2 / 20e-6 / 1e9)
        self.assertAlmostEqual(m["arithmetic_intensity"], 5 / 4.0)
        none = roofline.metrics(sm, {"rows": 8, "cols": 8}, "float32", 1.0, {})
        self.assertEqual(none["bound"], "")
        self.assertNotEqual(none["pct_peak"], none["pct_peak"])   # NaN: unknown device

    def test_impossible_rates_are_rejected(self):
        mm = ops.get("matmul")
        size = {"M": 4096, "N": 4096, "K": 4096}
        fast = roofline.metrics(mm, size, "bfloat16", 50.0, self.PEAKS)       # 2749 TFLOP/s
        self.assertIn("physical bf16 peak", roofline.impossible(fast, "bfloat16", self.PEAKS, True))
        ok = roofline.metrics(mm, size, "bfloat16", 200.0, self.PEAKS)
        self.assertIsNone(roofline.impossible(ok, "bfloat16", self.PEAKS, True))
        # fp32 may run on TF32 tensor cores: judged against the larger tf32 peak.
        fp32 = roofline.metrics(mm, size, "float32", 1000.0, self.PEAKS)      # 137 TFLOP/s
        self.assertIsNone(roofline.impossible(fp32, "float32", self.PEAKS, True))
        sm = ops.get("softmax")
        bw = roofline.metrics(sm, {"rows": 4096, "cols": 4096}, "bfloat16", 5.0, self.PEAKS)
        self.assertIn("DRAM bandwidth", roofline.impossible(bw, "bfloat16", self.PEAKS, True))
        # Warm caches (CPU timing) may legitimately beat DRAM bandwidth.
        self.assertIsNone(roofline.impossible(bw, "bfloat16", self.PEAKS, False))

    def test_suspicious_speedup_flag(self):
        self.assertIsNone(roofline.suspicious(9.9))
        self.assertIn("verify by hand", roofline.suspicious(12.0))
        self.assertIsNone(roofline.suspicious(float("nan")))


if __name__ == "__main__":
    unittest.main()


class Compare(unittest.TestCase):
    def test_out_of_range_truth_accepts_inf(self):
        import torch
        from harness.checks import compare
        tol = {"atol": 1e-2, "rtol": 1e-2}
        truth = torch.tensor([1.0, 1e5, -2e5], dtype=torch.float32)
        good = torch.tensor([1.0, float("inf"), float("-inf")]).half()
        self.assertIsNone(compare.check(good, truth, torch.float16, tol))
        saturated = torch.tensor([1.0, 65504.0, -65504.0]).half()
        self.assertIsNone(compare.check(saturated, truth, torch.float16, tol))
        wrong_sign = torch.tensor([1.0, float("-inf"), float("-inf")]).half()
        self.assertIn("beyond float16's range", compare.check(wrong_sign, truth, torch.float16, tol))
        nan_in_range = torch.tensor([float("nan"), float("inf"), float("-inf")]).half()
        self.assertIn("1 NaN", compare.check(nan_in_range, truth, torch.float16, tol))

    def test_worst_element_and_row_scale(self):
        import torch
        from harness.checks import compare
        tol = {"atol": 1e-3, "rtol": 1e-3}
        truth = torch.tensor([[1000.0, -1000.0, 0.01], [0.5, 0.25, 0.125]], dtype=torch.float64)
        out = truth.clone().float()
        out[0, 2] += 0.5      # row RMS ~816: atol scales to ~0.8, so 0.5 is within
        self.assertIsNone(compare.check(out, truth, torch.float32, tol))
        out[1, 1] += 0.01     # row RMS < 1: plain atol, 0.01 is outside
        msg = compare.check(out, truth, torch.float32, tol)
        self.assertIn("1 of 6 elements outside tolerance", msg)
        self.assertIn("worst at [1, 1]", msg)
