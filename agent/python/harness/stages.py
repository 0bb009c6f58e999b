"""The correctness stages: smoke, sizes x dtypes, hostile values, determinism, odd sizes, the
model's own shapes. Each returns a StageResult; the bench stops at the first failure."""

import time

from . import compare
from .caller import KernelFault, KernelRaised

_now = time.perf_counter


class StageResult:
    def __init__(self, name):
        self.name = name
        self.passed = True
        self.detail = ""
        self.failure = ""
        self.seconds = 0.0
        self.cheat = False            # failure is an integrity violation

    def fail(self, reason, cheat=False):
        self.passed = False
        self.failure = "%s: %s" % (self.name, reason)
        self.detail = reason
        self.cheat = cheat
        return self

    def as_dict(self):
        return {"name": self.name, "passed": self.passed, "detail": self.detail,
                "seconds": round(self.seconds, 4)}


def call_and_check(caller, case, tolerances):
    """Run one case; returns (output snapshot, None) or (None, reason)."""
    try:
        out = caller(case)
    except KernelFault as e:
        return None, "%s: %s" % (case.label, e)
    except KernelRaised as e:           # the kernel's own exception is the finding
        return None, "%s: kernel_fn raised %s" % (case.label, e)
    tol = tolerances[case.dtype]
    scale = case.spec.hostile_atol_scale.get(case.dist) if case.stage == "hostile" else None
    if scale:
        tol = dict(tol, atol=tol["atol"] * scale)
    problem = compare.check(out, case.truth, case.torch_dtype, tol)
    if problem:
        return None, "%s: %s" % (case.label, problem)
    return out, None


def run_stage(name, cases, caller, tolerances):
    result = StageResult(name)
    t0 = _now()
    try:
        if not cases:
            result.detail = "no TEST_SIZES declared by the kernel" if name == "model_shapes" else "nothing to run"
            return result
        worst = 0.0
        for case in cases:
            if name == "determinism":
                reason = _determinism(caller, case, tolerances)
                if reason:
                    return result.fail(reason)
                continue
            out, reason = call_and_check(caller, case, tolerances)
            if reason:
                return result.fail(reason)
            worst = max(worst, compare.max_error(out, case.truth))
        sizes = sorted({case.spec.size_label(c.size) for c in cases})
        dtypes = sorted({c.dtype for c in cases})
        result.detail = "%d cases (%s; %s)" % (len(cases), ", ".join(sizes[:6]) + (
            ", ..." if len(sizes) > 6 else ""), ", ".join(dtypes))
        if name != "determinism":
            result.detail += ", max |err| %.3g" % worst
        return result
    finally:
        result.seconds = _now() - t0


def _determinism(caller, case, tolerances):
    first, reason = call_and_check(caller, case, tolerances)
    if reason:
        return reason
    second, reason = call_and_check(caller, case, tolerances)
    if reason:
        return reason
    if not compare.bit_equal(first, second):
        diff = (first.double() - second.double()).abs()
        n = int((compare.bits(first) != compare.bits(second)).sum())
        return ("%s: two calls on identical inputs returned different bits (%d elements differ, "
                "max |diff| %.3g): the kernel is nondeterministic or reads uninitialised memory"
                % (case.label, n, float(diff.max())))
    return None
