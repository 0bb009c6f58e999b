"""The `bench` worker op: correctness stages, anti-cheat, timing and roofline for one kernel.py.

handle(args, ctx) with args {kernel_path, device: cpu|cuda, dtype?, quick?, peaks?, seed?,
best_latency_us?}. Returns the result dict described in docs/harness.md. Never raises for a bad
kernel: problems come back as status "error" (unusable file or environment) or "incorrect".
"""

import os
import random
import time

import torch

from . import integrity, loader, ops, plan, roofline, stages, timed, timing  # noqa: F401 (timing binds timers)
from .contract import TOLERANCE_LOOSEN_LIMIT
from .dtypes import canonical
from .guards import CheckedCaller, KernelFault, is_fatal

integrity.capture()   # first import, before any kernel module: the golden snapshot

_now = time.perf_counter


class _Progress:
    def __init__(self, ctx):
        self.ctx = ctx

    def __call__(self, message, fraction):
        if self.ctx is not None and hasattr(self.ctx, "progress"):
            self.ctx.progress(message, fraction)


def _result(status, failure="", **extra):
    out = {"correct": status == "ok", "status": status, "failure": failure, "stages": []}
    out.update(extra)
    return out


def _tolerances(spec, override):
    """Defaults, with the kernel's TOLERANCES honoured (tightening freely, loosening up to 10x)."""
    tol = {k: dict(v) for k, v in spec.tolerances.items()}
    notes = []
    if not override:
        return tol, notes
    if not isinstance(override, dict):
        raise loader.KernelFileError("TOLERANCES must be a dict {dtype: {'atol': .., 'rtol': ..}}")
    for key, value in override.items():
        name = canonical(key)
        if isinstance(value, (tuple, list)) and len(value) == 2:
            value = {"atol": value[0], "rtol": value[1]}
        if not isinstance(value, dict):
            raise loader.KernelFileError("TOLERANCES[%r] must be {'atol': .., 'rtol': ..}" % key)
        for k in ("atol", "rtol"):
            if k not in value:
                continue
            v, default = float(value[k]), spec.tolerances[name][k]
            if not v >= 0:
                raise loader.KernelFileError("TOLERANCES[%r][%r] = %r is not a non-negative number"
                                             % (key, k, value[k]))
            if v > default * TOLERANCE_LOOSEN_LIMIT:
                raise loader.KernelFileError(
                    "TOLERANCES loosens %s %s to %g: more than %gx the default %g is not accepted"
                    % (name, k, v, TOLERANCE_LOOSEN_LIMIT, default))
            if v != default:
                notes.append("%s %s %g (default %g)" % (name, k, v, default))
            tol[name][k] = v
    return tol, notes


def _model_sizes(spec, raw):
    if not raw:
        return []
    if not isinstance(raw, (list, tuple)):
        raise loader.KernelFileError("TEST_SIZES must be a list of sizes")
    try:
        return [spec.normalize_size(s) for s in raw]
    except ValueError as e:
        raise loader.KernelFileError("TEST_SIZES: %s" % e)


def handle(args, ctx=None):
    return run(args or {}, _Progress(ctx))


def run(args, progress=lambda m, f: None):
    t_start = _now()
    path = args.get("kernel_path")
    device = str(args.get("device") or "cpu").lower()
    quick = bool(args.get("quick", False))
    # Problems of the request or the machine, not of the kernel: flagged so that the CLI exits 2 and
    # the loop does not count them against the kernel.
    if not path:
        return _result("error", "bench: args.kernel_path is missing", environment_error=True)
    if device not in ("cpu", "cuda"):
        return _result("error", "bench: device %r is not cpu or cuda" % device, environment_error=True)
    if device == "cuda" and not torch.cuda.is_available():
        return _result("error", "bench: --device cuda asked for, but this PyTorch (%s) sees no CUDA "
                                "device" % torch.__version__, environment_error=True)
    seed = args.get("seed")
    seed = int(seed) if seed is not None else random.SystemRandom().getrandbits(62)
    rng = random.Random(seed)
    restored = integrity.check(restore=True)     # a previous kernel in this worker leaked a patch
    integrity.capture()                          # modules imported since (extract, describe, ...)
    notes = ["restored before this run: " + "; ".join(restored)] if restored else []

    load_stage = stages.StageResult("import")
    t0 = _now()
    try:
        static = loader.read_static(path)
        ktype = static.get("KERNEL_TYPE")
        if ktype is None:
            raise loader.KernelFileError("%s declares no KERNEL_TYPE" % os.path.basename(path))
        if ktype is loader.DYNAMIC:
            raise loader.KernelFileError("KERNEL_TYPE must be a string literal")
        try:
            spec = ops.get(ktype)
        except KeyError as e:
            raise loader.KernelFileError(str(e.args[0]))
        if static["kernel_fn_args"] is None:
            raise loader.KernelFileError("%s defines no kernel_fn" % os.path.basename(path))
        dyn = [k for k in ("TEST_SIZES", "TOLERANCES", "TEST_DTYPES") if static.get(k) is loader.DYNAMIC]
        if dyn:
            raise loader.KernelFileError("%s must be literal values (they are read before the kernel "
                                         "is imported)" % ", ".join(dyn))
        dtypes, timing_dtype = plan.resolve_dtypes(device, static.get("TEST_DTYPES"), args.get("dtype"))
        tolerances, tol_notes = _tolerances(spec, static.get("TOLERANCES"))
        model_sizes = _model_sizes(spec, static.get("TEST_SIZES"))
    except (loader.KernelFileError, ValueError) as e:
        load_stage.fail(str(e))
        load_stage.seconds = _now() - t0
        return _result("error", load_stage.failure, stages=[load_stage.as_dict()], notes=notes,
                       bench_seconds=_now() - t_start)

    # Inputs and ground truths for every stage, before a line of kernel code runs.
    progress("preparing inputs and reference results", 0.02)
    cases = plan.build(spec, device, quick, dtypes, timing_dtype, model_sizes, rng)
    all_cases = [c for group in cases.values() for c in group]
    for c in all_cases:
        c.materialize(device)
    if device == "cuda":
        torch.cuda.synchronize()

    base = dict(kernel_type=spec.name, device=device, dtype=timing_dtype, quick=quick, seed=seed,
                test_dtypes=dtypes, tolerances=tolerances, notes=notes + (
                    ["kernel TOLERANCES: " + ", ".join(tol_notes)] if tol_notes else []),
                timing_size=cases["timing"][0].size)

    try:
        module = loader.load_module(path)
    except loader.KernelFileError as e:
        load_stage.fail(str(e))
        load_stage.seconds = _now() - t0
        return _result("error", load_stage.failure, stages=[load_stage.as_dict()],
                       bench_seconds=_now() - t_start, **base)
    problems = integrity.check(restore=True)
    load_stage.seconds = _now() - t0
    if problems:
        load_stage.fail("integrity: importing the kernel " + "; ".join(problems[:5]), cheat=True)
        return _result("incorrect", load_stage.failure, stages=[load_stage.as_dict()],
                       bench_seconds=_now() - t_start, **base)
    load_stage.detail = "KERNEL_TYPE %s, kernel_fn(%s)" % (spec.name, ", ".join(static["kernel_fn_args"]))
    results = [load_stage]

    def finish(status, failure, **more):
        out = _result(status, failure, stages=[r.as_dict() for r in results],
                      bench_seconds=_now() - t_start, **base)
        out.update(more)
        return out

    kernel_fn = module.kernel_fn
    caller = CheckedCaller(kernel_fn, device, spec.args)
    for i, name in enumerate(plan.STAGES):
        progress("stage %s" % name, 0.05 + 0.6 * i / len(plan.STAGES))
        r = stages.run_stage(name, cases[name], caller, tolerances)
        results.append(r)
        if not r.passed:
            return finish("incorrect", r.failure)
    caller.forget()

    # Timing, with outputs re-checked at random calls.
    progress("timing", 0.7)
    timing_stage = stages.StageResult("timing")
    results.append(timing_stage)
    main, alts = cases["timing"][0], cases["timing"][1:]
    t0 = _now()
    try:
        measured, probe = timed.measure(kernel_fn, spec, main, alts, device, quick, rng.getrandbits(62))
        reason = timed.verify(probe, main, tolerances)
        peak_mb = timed.peak_memory_mb(kernel_fn, main.inputs, device)
    except KernelFault as e:
        reason, measured = str(e), None
    except Exception as e:  # noqa: BLE001
        if is_fatal(e):
            raise
        reason, measured = "kernel_fn raised %s while being timed: %s" % (
            type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else ""), None
    timing_stage.seconds = _now() - t0
    if reason:
        timing_stage.fail(reason)
        return finish("incorrect", timing_stage.failure)
    problems = integrity.check(restore=True)
    if problems:
        timing_stage.fail("integrity: " + "; ".join(problems[:5]), cheat=True)
        return finish("incorrect", timing_stage.failure)
    timing_stage.detail = "%s: %.2f us (reference %.2f us), %d timed calls checked" % (
        main.label, measured["latency_us"], measured["ref_latency_us"], measured["checked_calls"])

    # Roofline and physical plausibility.
    peaks = args.get("peaks") or {}
    m = roofline.metrics(spec, main.size, timing_dtype, measured["latency_us"], peaks)
    plaus = stages.StageResult("plausibility")
    results.append(plaus)
    why = roofline.impossible(m, timing_dtype, peaks, measured.get("cold_l2", False))
    speedup = measured["speedup"]
    flags = [f for f in (roofline.suspicious(speedup),) if f]
    timing_info = {k: v for k, v in measured.items()
                   if k not in ("latency_us", "ref_latency_us", "speedup", "noise_pct")}
    metrics = dict(latency_us=measured["latency_us"], ref_latency_us=measured["ref_latency_us"],
                   speedup=speedup, tflops=m["tflops"], gbps=m["gbps"],
                   arithmetic_intensity=m["arithmetic_intensity"], bound=m["bound"],
                   pct_peak=m["pct_peak"], noise_pct=measured["noise_pct"], peak_vram_mb=peak_mb,
                   flops=m["flops"], bytes=m["bytes"], timing=timing_info, flags=flags)
    if why:
        plaus.fail(why, cheat=True)
        return finish("incorrect", plaus.failure, rejected_metrics=metrics)
    plaus.detail = "%.3g TFLOP/s, %.3g GB/s, %s-bound%s" % (
        m["tflops"], m["gbps"], m["bound"] or "unknown",
        (", %.1f%% of peak" % m["pct_peak"]) if m["pct_peak"] == m["pct_peak"] else "")
    out = finish("ok", "", **metrics)
    best = args.get("best_latency_us")
    if best:
        out["keep"] = roofline.keep_decision(float(best), measured["latency_us"], measured["noise_pct"])
    progress("done", 1.0)
    return out
