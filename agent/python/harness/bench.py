"""The `bench` worker op: correctness stages, anti-cheat, timing and roofline for one kernel.py.

This module is the judge. It never imports the kernel: the kernel runs in a fresh process in a
sandbox (runners/pool.py, isolation/sandbox.py, runners/runner.py), gets its inputs through shared
memory and hands its outputs back as bytes. Inputs, ground truths, the comparison, the clocks and the reply to the
worker's client live here, in a process the kernel cannot see.

handle(args, ctx) with args {kernel_path, kernel_source_b64?, device: cpu|cuda, dtype?, quick?, peaks?, seed?,
best_latency_us?, time_limit_s?, contract?, allow_reduced_precision?}. allow_reduced_precision: a
precision shortcut the reference does not take (precision.py) passes, flagged in the result's
"precision", instead of failing the bench. `contract` is the folder's contract ({"attrs": {...}} or the
whole object of docs/contracts.md): the op is bound to its attributes (else to the kernel's CONTRACT
literal, else to the defaults) and the result's "contract" says which attributes were used.
Returns the result dict described in docs/harness.md. Never
raises for a bad kernel: problems come back as status "error" (unusable file or environment),
"incorrect", "crash" (the kernel's process died) or "timeout".
"""

import base64
import importlib.util
import os
import random
import time

import torch

from . import judgeid, ops
from .timing import compiled, roofline, rounds
from .checks import plan, precision, stages
from .runners import loader, pool
from .isolation import sandbox, textsafe
from .ipc import shm
from .runners.caller import KernelFault, KernelRaised, RemoteCaller, region_bytes
from .contract.rules import TOLERANCE_LOOSEN_LIMIT
from .contract.dtypes import canonical
from .runners.pool import RunnerFailure

sandbox.make_undumpable()   # nothing of the same user may read this process's memory or descriptors

_now = time.perf_counter
WORKER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME_MARGIN_S = 3.0         # the judge answers before the worker's client gives up on it
TIMING_RETRIES = 2          # timing stages measured again when the net time comes out <= 0 (load)


class _Progress:
    def __init__(self, ctx):
        self.ctx = ctx

    def __call__(self, message, fraction):
        if self.ctx is not None and hasattr(self.ctx, "progress"):
            self.ctx.progress(message, fraction)


def _result(status, failure="", **extra):
    out = {"correct": status == "ok", "status": status, "failure": failure, "stages": []}
    out.update(extra)
    return textsafe.clean_tree(out)      # a kernel's text (its errors, its output) is data


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


def _bound(spec, sent, literal):
    """The op bound to its contract attributes: the folder's (sent with the request; authoritative),
    else the kernel's CONTRACT literal, else the defaults. Both present and different: an error naming
    both (extract writes CONTRACT; it must stay as written)."""
    folder = kernel = None
    if sent is not None:
        if not isinstance(sent, dict):
            raise loader.KernelFileError("bench: args.contract must be an object ({\"attrs\": {...}})")
        op = sent.get("op_type")
        if op:
            try:
                other = ops.get(op).name
            except KeyError as e:
                raise loader.KernelFileError("the folder's contract: %s" % e.args[0])
            if other != spec.name:
                raise loader.KernelFileError("the folder's contract is for %s, the kernel's KERNEL_TYPE is %s"
                                             % (other, spec.name))
        try:
            folder = spec.check_attrs(sent.get("attrs") or {})
        except ValueError as e:
            raise loader.KernelFileError("the folder's contract: %s" % e)
    if literal is not None:
        if not isinstance(literal, dict):
            raise loader.KernelFileError("CONTRACT must be a dict literal of %s's attributes, not %r"
                                         % (spec.name, literal))
        try:
            kernel = spec.check_attrs(literal)
        except ValueError as e:
            raise loader.KernelFileError("CONTRACT: %s" % e)
    if folder is not None and kernel is not None and folder != kernel:
        raise loader.KernelFileError(
            "the kernel's CONTRACT %r differs from the folder's contract %r: the kernel must implement the "
            "folder's attributes and leave CONTRACT as extract wrote it" % (kernel, folder))
    chosen = folder if folder is not None else kernel
    return spec.bind(chosen) if chosen is not None else spec


def _source(args, path):
    """The kernel's bytes: sent with the request (a worker on another machine shares no disk), else
    read from kernel_path."""
    sent = args.get("kernel_source_b64")
    if sent is None:
        return loader.read_source(path)
    try:
        return base64.b64decode(sent, validate=True)
    except (ValueError, TypeError) as e:
        raise loader.KernelFileError("bench: args.kernel_source_b64 is not base64: %s" % e)


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
    pool.prestart(device, WORKER_DIR)        # the runners import torch while the judge prepares
    seed = args.get("seed")
    seed = int(seed) if seed is not None else random.SystemRandom().getrandbits(62)
    rng = random.Random(seed)
    limit = float(args.get("time_limit_s") or 180)
    deadline = pool.Deadline(max(5.0, limit - TIME_MARGIN_S))

    load_stage = stages.StageResult("import")
    t0 = _now()
    try:
        source = _source(args, path)
        static = loader.read_static(path, source)
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
        dyn = [k for k in ("TEST_SIZES", "TOLERANCES", "TEST_DTYPES", "CONTRACT")
               if static.get(k) is loader.DYNAMIC]
        if dyn:
            raise loader.KernelFileError("%s must be literal values (they are read before the kernel "
                                         "is imported)" % ", ".join(dyn))
        spec = _bound(spec, args.get("contract"), static.get("CONTRACT"))
        dtypes, timing_dtype = plan.resolve_dtypes(device, static.get("TEST_DTYPES"), args.get("dtype"))
        tolerances, tol_notes = _tolerances(spec, static.get("TOLERANCES"))
        model_sizes = _model_sizes(spec, static.get("TEST_SIZES"))
    except (loader.KernelFileError, ValueError) as e:
        load_stage.fail(str(e))
        load_stage.seconds = _now() - t0
        return _result("error", load_stage.failure, stages=[load_stage.as_dict()],
                       bench_seconds=_now() - t_start)

    # Inputs and ground truths for every stage, before the kernel's process exists.
    progress("preparing inputs and reference results", 0.02)
    cases = plan.build(spec, device, quick, dtypes, timing_dtype, model_sizes, rng)
    cases["precision"] = precision.cases(spec, [timing_dtype] if quick else dtypes, lambda: rng.getrandbits(62))
    all_cases = [c for group in cases.values() for c in group]
    for c in all_cases:
        c.materialize(device)
    if device == "cuda":
        torch.cuda.synchronize()

    base = dict(kernel_type=spec.name, device=device, dtype=timing_dtype, quick=quick, seed=seed,
                test_dtypes=dtypes, tolerances=tolerances,
                notes=["kernel TOLERANCES: " + ", ".join(tol_notes)] if tol_notes else [],
                timing_size=cases["timing"][0].size, contract=dict(spec.attrs))
    progress("starting the kernel's sandbox", 0.04)
    try:
        candidate = pool.Candidate(device, WORKER_DIR, deadline)
    except (RuntimeError, OSError, RunnerFailure) as e:
        load_stage.fail("the kernel's sandbox could not start: %s" % e)
        iso = pool.isolation(device)
        return _result("error", load_stage.failure, stages=[load_stage.as_dict()], environment_error=True,
                       bench_seconds=_now() - t_start, isolation=iso, judge=judgeid.identity(iso), **base)
    base["isolation"] = candidate.sb.describe()
    base["judge"] = judgeid.identity(base["isolation"])
    judge = _Judge(args, spec, device, quick, cases, tolerances, candidate, deadline, rng, progress)
    try:
        return judge.run(path, source, static, load_stage, t0, t_start, base)
    finally:
        note = judge.close()
        if note:
            base["notes"].append(note)


class _Judge:
    """One bench once the kernel's process exists: stages, timing, plausibility."""

    def __init__(self, args, spec, device, quick, cases, tolerances, candidate, deadline, rng, progress):
        self.args, self.spec, self.device, self.quick = args, spec, device, quick
        self.cases, self.tolerances, self.candidate = cases, tolerances, candidate
        self.deadline, self.rng, self.progress = deadline, rng, progress
        self.arena = None
        self.reference = None
        self.results = []

    def close(self):
        note = self.candidate.finish()
        if self.reference is not None:
            try:
                self.reference.request({"op": "release"}, cap=30)
            except RunnerFailure:
                pool.shutdown_reference(self.device)
        if self.arena is not None:
            self.arena.close()
        return note

    def finish(self, status, failure, t_start, base, **more):
        out = _result(status, failure, stages=[r.as_dict() for r in self.results],
                      bench_seconds=_now() - t_start, **base)
        out.update(more)
        return out

    def _arena(self):
        timing = self.cases["timing"][0]
        case_region = max(region_bytes(c.inputs, c.out_nbytes()) for group in self.cases.values() for c in group)
        self.timing_base = shm.aligned(case_region)
        total = self.timing_base + rounds.slot_count(timing, self.device) * rounds.slot_bytes(timing)
        self.arena = shm.create(self.device, total)

    def run(self, path, source, static, load_stage, t0, t_start, base):
        runner, spec = self.candidate.runner, self.spec
        try:
            self._arena()
            local = os.path.join(self.candidate.cwd, os.path.basename(path))
            load = {"op": "load", "path": local, "args": list(spec.args)}
            if self.candidate.sb.scratch_mb:     # its own tmpfs: the process writes the bytes read here
                load["source_b64"] = base64.b64encode(source).decode()
            else:
                with open(local, "wb") as f:
                    f.write(source)
            reply = _attach(runner, self.arena)
            if not reply.get("ok"):
                raise RunnerFailure("the kernel's process could not map the shared memory: %s"
                                    % reply.get("error"), "protocol")
            reply = runner.request(load)
        except RunnerFailure as e:
            load_stage.fail(str(e))
            load_stage.seconds = _now() - t0
            self.results.append(load_stage)
            return self.finish(_failure_status(e), load_stage.failure, t_start, base)
        load_stage.seconds = _now() - t0
        self.results.append(load_stage)
        if not reply.get("ok"):
            load_stage.fail(str(reply.get("error")).replace(local, path), cheat=bool(reply.get("cheat")))
            # A Triton kernel on a worker whose Python has no Triton (a remote machine set up without
            # it) is the machine's fault, not the kernel's: the loop pauses instead of failing every
            # kernel. The judge asks its own interpreter (the runner's), not the kernel's message.
            missing = self.device == "cuda" and "imports triton" in load_stage.failure \
                and importlib.util.find_spec("triton") is None
            return self.finish("incorrect" if reply.get("cheat") else "error", load_stage.failure, t_start, base,
                               environment_error=missing)
        load_stage.detail = "KERNEL_TYPE %s, kernel_fn(%s)" % (spec.name, ", ".join(static["kernel_fn_args"]))

        caller = RemoteCaller(runner, self.arena, self.device, spec.args)
        for i, name in enumerate(plan.STAGES):
            self.progress("stage %s" % name, 0.05 + 0.6 * i / len(plan.STAGES))
            stage = stages.StageResult(name)
            try:
                if name == "precision":
                    r, base["precision"] = stages.run_precision(
                        self.cases[name], caller, bool(self.args.get("allow_reduced_precision")), spec.name)
                else:
                    r = stages.run_stage(name, self.cases[name], caller, self.tolerances)
            except RunnerFailure as e:
                stage.fail(str(e))
                self.results.append(stage)
                return self.finish(_failure_status(e), stage.failure, t_start, base)
            self.results.append(r)
            if not r.passed:
                return self.finish("incorrect", r.failure, t_start, base)
        return self._timing(t_start, base)

    def _timing(self, t_start, base):
        self.progress("timing", 0.7)
        stage = stages.StageResult("timing")
        self.results.append(stage)
        main = self.cases["timing"][0]
        t0 = _now()
        try:
            self.reference, self.reference_sb = pool.reference(self.device, WORKER_DIR, self.deadline)
            ok = _attach(self.reference, self.arena, cap=60).get("ok") \
                and self.reference.request({"op": "reference", "op_type": self.spec.name,
                                            "attrs": dict(self.spec.attrs)}).get("ok")
            if not ok:
                raise RuntimeError("the reference runner could not load %s" % self.spec.name)
        except (RuntimeError, OSError, RunnerFailure) as e:
            stage.fail("the reference runner is not available: %s" % e)
            return self.finish("error", stage.failure, t_start, base, environment_error=True)
        measured, reason = None, None
        try:
            # A busy host (other processes waking late) can make the null kernel's rounds slower
            # than the kernel's: a net time <= 0 is measured again before it is taken as "no work
            # in the timed calls", so load alone does not fail a correct kernel. A kernel whose work
            # really lies outside the clock stays at <= 0 every time.
            for attempt in range(1 + TIMING_RETRIES):
                measured, checks = rounds.measure(self.candidate, self.reference, self.reference_sb,
                                                 self.arena, self.timing_base,
                                                 self.spec, main, self.device, self.quick,
                                                 self.rng.getrandbits(62), self.deadline, self.progress,
                                                 min_rounds=self.args.get("min_rounds"))
                reason = rounds.verify(checks, main, self.spec, self.tolerances)
                if reason is not None or measured["latency_us"] > 0 or self.deadline.expired():
                    break
            measured["timing_attempts"] = attempt + 1
            if reason is None and not measured["latency_us"] > 0:
                # Its checked outputs were right, so the work was done: below what the clock resolves
                # at this size (the reference's net time says whether the size is the cause), or
                # outside the timed calls. Either way it has no time to keep.
                reason = ("the kernel's calls took no longer than calls that do no work (%.3g us vs %.3g us; "
                          "PyTorch's reference %.3g us more): its work is below what the judge's clock "
                          "resolves at this size, or happens outside the timed calls"
                          % (measured["raw_latency_us"], measured["null_us"], measured["ref_latency_us"]))
        except KernelFault as e:
            reason = str(e)
        except KernelRaised as e:
            reason = "kernel_fn raised %s while being timed" % e
        except RunnerFailure as e:
            stage.fail(str(e))
            stage.seconds = _now() - t0
            return self.finish(_failure_status(e), stage.failure, t_start, base)
        stage.seconds = _now() - t0
        if reason:
            stage.fail(reason)
            return self.finish("incorrect", stage.failure, t_start, base)
        stage.detail = "%s: %.2f us (reference %.2f us), %d timed calls, %d checked" % (
            main.label, measured["latency_us"], measured["ref_latency_us"], measured["timed_calls"],
            measured["checked_calls"])
        return self._plausibility(main, measured, t_start, base)

    def _plausibility(self, main, measured, t_start, base):
        peaks = self.args.get("peaks") or {}
        m = roofline.metrics(self.spec, main.size, main.dtype, measured["latency_us"], peaks)
        plaus = stages.StageResult("plausibility")
        self.results.append(plaus)
        why = roofline.impossible(m, main.dtype, peaks, measured.get("cold_l2", False))
        speedup = measured["speedup"]
        # A large speedup over PyTorch is a note, not a flag: whether it deserves a person depends on
        # what this op reached before (the loop's history rule), and some starters already beat an
        # unfused eager reference by more than 10x.
        flags = []
        note = roofline.suspicious(speedup)
        if note:
            base["notes"].append(note)
        if self.device == "cpu":
            copy_roof = _cpu_copy_roof_gbs(rounds.slot_bytes(main) * measured["calls_per_round"])
            flag = roofline.beyond_copy_roof(m, copy_roof)
            measured["copy_roof_gbs"] = copy_roof
            if flag:
                flags.append(flag)
        peak_mb = float("nan")
        if self.device == "cuda":
            try:
                peak_mb = self.candidate.runner.request({"op": "peak", "id": 0}, cap=60).get("peak_mb")
            except RunnerFailure:
                pass
        timing_info = {k: v for k, v in measured.items()
                       if k not in ("latency_us", "ref_latency_us", "speedup", "noise_pct")}
        metrics = dict(latency_us=measured["latency_us"], ref_latency_us=measured["ref_latency_us"],
                       speedup=speedup, tflops=m["tflops"], gbps=m["gbps"],
                       arithmetic_intensity=m["arithmetic_intensity"], bound=m["bound"],
                       pct_peak=m["pct_peak"], pct_peak_spec=m["pct_peak_spec"], roof=m["roof"],
                       noise_pct=measured["noise_pct"],
                       peak_vram_mb=peak_mb if peak_mb is not None else float("nan"),
                       flops=m["flops"], bytes=m["bytes"], timing=timing_info, flags=flags)
        if why:
            plaus.fail(why, cheat=True)
            return self.finish("incorrect", plaus.failure, t_start, base, rejected_metrics=metrics)
        if self.args.get("compile_baseline", True):
            self.progress("the compiled PyTorch baseline", 0.9)
            metrics.update(self._compiled(main, measured))
        plaus.detail = "%.3g TFLOP/s, %.3g GB/s, %s-bound%s" % (
            m["tflops"], m["gbps"], m["bound"] or "unknown",
            (", %.1f%% of the %s roof" % (m["pct_peak"], m["roof"])) if m["pct_peak"] == m["pct_peak"] else "")
        out = self.finish("ok", "", t_start, base, **metrics)
        best = self.args.get("best_latency_us")
        if best:
            out["keep"] = roofline.keep_decision(float(best), measured["latency_us"], measured["noise_pct"])
        self.progress("done", 1.0)
        return out


    def _compiled(self, main, measured):
        """torch.compile's time for the reference beside eager's, and the kernel's speedup over it."""
        out = compiled.baseline(self.spec, main, self.device, measured["ref_latency_us"], self.deadline.left())
        c = out["compile_latency_us"]
        lat = measured["latency_us"]
        out["compile_speedup"] = c / lat if c == c and lat > 0 else float("nan")
        return out


def _attach(runner, arena, cap=None):
    """Hands the arena to a runner (a descriptor of its own, closed here once sent)."""
    fd = arena.export_fd()
    try:
        return runner.request({"op": "attach", "size": arena.size}, fds=[fd], cap=cap)
    finally:
        os.close(fd)


def _failure_status(e):
    return "timeout" if e.kind == "timeout" else "crash"


_copy_roof = {}


def _cpu_copy_roof_gbs(working_set):
    """GB/s of torch's copy over a working set like the timing rounds' (bytes read + written), once
    per size class: a kernel that moves its bytes faster than a copy of them is beyond the CPU's roof."""
    key = max(1 << 16, 1 << (int(working_set).bit_length()))
    if key not in _copy_roof:
        n = max(1 << 14, key // 8)
        src, dst = torch.ones(n, dtype=torch.float32), torch.empty(n, dtype=torch.float32)
        for _ in range(3):
            dst.copy_(src)
        best = float("inf")
        for _ in range(7):
            t = time.perf_counter_ns()
            dst.copy_(src)
            best = min(best, time.perf_counter_ns() - t)
        _copy_roof[key] = 2.0 * n * 4 / max(best, 1.0)       # bytes / ns = GB/s
    return _copy_roof[key]
