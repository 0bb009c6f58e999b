"""The correctness stages: smoke, sizes x dtypes, hostile values, determinism, odd sizes, the
model's own shapes. Each returns a StageResult; the bench stops at the first failure."""

import time

from . import compare
from ..ipc import bits
from ..runners.caller import KernelFault, KernelRaised

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
    if not bits.bit_equal(first, second):
        diff = (first.double() - second.double()).abs()
        n = int((bits.bits(first) != bits.bits(second)).sum())
        return ("%s: two calls on identical inputs returned different bits (%d elements differ, "
                "max |diff| %.3g): the kernel is nondeterministic or reads uninitialised memory"
                % (case.label, n, float(diff.max())))
    return None


ALLOW_HINT = ("allow it for this run with --allow-reduced-precision (run, profile) or run.json's "
              "settings.allow_reduced_precision")


def run_precision(cases, caller, allowed, op_name):
    """The precision stage (precision.py): (StageResult, record). The record goes into the result as
    `precision` {probed, allowed, flags [{dtype, flag, text}], probes [...], text}: what the window,
    status and the experiment log show for this kernel."""
    from . import precision

    result = StageResult("precision")
    record = {"probed": bool(cases), "allowed": bool(allowed), "flags": [], "probes": []}
    t0 = _now()
    try:
        if not cases:
            result.detail = record["text"] = "not probed: %s has no precision probe (its tolerances judge it)" % op_name
            return result, record
        for case in cases:
            reason, shortcut = _probe_one(case, caller, record, precision)
            if reason and not shortcut:
                result.fail("%s: %s" % (case.label, reason))
                record["text"] = "not measured: the probe failed"
                return result, record
            if reason and not allowed:
                result.fail("%s: %s; %s" % (case.label, reason, ALLOW_HINT))
                record["text"] = "refused: " + reason
                return result, record
        names = ["%s (%s)" % (f["flag"], f["dtype"]) for f in record["flags"]]
        record["text"] = ("%s, allowed by the run" % ", ".join(names)) if names else \
            "fp32 accumulation (probed: %s)" % ", ".join(p["dtype"] for p in record["probes"])
        result.detail = "; ".join("%s: %s" % (p["dtype"], p["measured"]) for p in record["probes"])
        if names:
            result.detail = "flagged, allowed by the run: %s; %s" % (", ".join(names), result.detail)
        return result, record
    finally:
        result.seconds = _now() - t0


def _probe_one(case, caller, record, precision):
    """Runs one probe and records it: (reason, shortcut). shortcut: the reason is a shortcut the
    reference does not take (refused unless allowed); otherwise a kernel that cannot run the probe at
    all (it raised, a wrong shape or dtype), which fails like any stage."""
    try:
        out = caller(case)
    except KernelFault as e:
        return "%s" % e, False
    except KernelRaised as e:
        return "kernel_fn raised %s" % e, False
    problem = compare.check(out, case.truth, case.torch_dtype, {"atol": float("inf"), "rtol": 0.0})
    if problem and "NaN" not in problem:
        return problem, False
    flag, measured = precision.classify(out, case.truth, case.torch_dtype)
    ref = precision.reference_flag(case)
    record["probes"].append({"dtype": case.dtype, "flag": flag, "reference_flag": ref, "measured": measured})
    if flag is None or flag == ref:
        return None, False
    text = precision.flag_text(flag, case.torch_dtype)
    record["flags"].append({"dtype": case.dtype, "flag": flag, "text": text})
    return "the kernel %s and the PyTorch reference does not: %s" % (text, measured), True
