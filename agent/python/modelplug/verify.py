"""The `verify` worker op: put a run's kept kernels back into its model, prove the model still computes
the same thing, measure it end to end, and keep only the kernels that win there.

The user's model runs here (as for `profile`) to give the original outputs and a higher-precision
truth; the kernels run only in a sandboxed model runner (child.py), whose outputs come back as bytes
and whose requests are timed by this process's clock. See docs/model-speedup.md.

args {run_dir, model_path, device, dtype, kernels: [{name, op_type, path, blob, dtype, callable?}], seeds,
      previous: verification.json or null, compile: bool, mode: "eager" | "compile", reps, rounds,
      time_limit_s}

mode "compile": the kernels are chosen by their effect on the model under torch.compile (each kernel a
torch.library custom op with a fake implementation; the model compiled with all of them and without
each), for a user who compiles; "eager" (the default) by their effect on the eager model.
"""

import datetime
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

PARITY_TOLERANCE = {   # the harness's matmul tolerances: a model is mostly matmuls
    "float32": {"atol": 1e-4, "rtol": 1e-4},
    "bfloat16": {"atol": 2e-2, "rtol": 2e-2},
    "float16": {"atol": 1e-2, "rtol": 1e-2},
}
WORSE_THAN_EAGER = 2.0      # ours may be at most this many times further from the truth than eager
NOISE_FLOOR_PCT = 1.0
MODES = ("eager", "compile")
PLUG_SHA = None             # sha256 over the plug package: a verification made with other plugging code is not reused


class VerifyError(Exception):
    """The run cannot be verified as asked (a missing or changed model file, no call sites)."""


def _progress(ctx, message, fraction=None):
    if ctx is not None:
        ctx.progress(message, fraction)


def call_sites(run_dir):
    """kernel folder name -> sorted module names of its call sites, from profile.json."""
    path = os.path.join(run_dir, "profile.json")
    try:
        with open(path) as f:
            profile = json.load(f)
    except (OSError, ValueError) as e:
        raise VerifyError("%s cannot be read: %s" % (path, e))
    out, recorded = {}, False
    for row in profile.get("kernels", []):
        if "call_sites" in row:
            recorded = True
        folder = row.get("folder", "")
        if not folder:
            continue
        name = folder.split("/", 1)[-1]
        for site in row.get("call_sites") or []:
            out.setdefault(name, set()).add(site.get("module") or "<model>")
    return {k: sorted(v) for k, v in out.items()}, recorded


def site_times(run_dir):
    """kernel folder name -> its profiled rows' eager time per iteration (us), from profile.json."""
    try:
        with open(os.path.join(run_dir, "profile.json")) as f:
            rows = json.load(f).get("kernels", [])
    except (OSError, ValueError):
        return {}
    out = {}
    for row in rows:
        name = (row.get("folder") or "").split("/", 1)[-1]
        if name and isinstance(row.get("time_us"), (int, float)):
            out[name] = out.get(name, 0.0) + float(row["time_us"])
    return out


def check_mode(args):
    """The verification's mode ("eager" or "compile"); VerifyError naming what is missing for compile."""
    mode = args.get("mode") or "eager"
    if mode not in MODES:
        raise VerifyError("mode %r: it must be eager or compile" % mode)
    if mode == "compile":
        import torch
        from modelplug import plug
        if not args.get("compile", True):
            raise VerifyError("mode compile chooses the kernels under torch.compile: it cannot be verified without "
                              "compiling (--no-compile)")
        if not hasattr(torch, "compile"):
            raise VerifyError("mode compile: torch %s has no torch.compile (2.0+); verify in eager mode"
                              % torch.__version__)
        api, why = plug.custom_op_api()
        if api is None:
            raise VerifyError("mode compile: %s" % why)
    return mode


def _read_outputs(directory, items, device="cpu"):
    """The runner's output files as tensors on `device` (where parity is computed)."""
    import torch
    try:
        import numpy
    except ImportError:      # torch runs without numpy; then one more copy
        numpy = None
    out = []
    for it in items:
        path = os.path.join(directory, it["file"])
        if numpy is not None:
            raw = numpy.fromfile(path, dtype=numpy.uint8)
            t = torch.from_numpy(raw) if raw.size else torch.empty(0, dtype=torch.uint8)
        else:
            with open(path, "rb") as f:
                data = bytearray(f.read())
            t = torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        out.append((it["path"], t.view(getattr(torch, it["dtype"])).reshape(it["shape"]).to(device)))
    return out


def _normalized_error(x, truth, dtype_name):
    """max |x - truth| / allowed, the harness's rule: allowed = atol * max(1, rms(row)) + (rtol + eps) |truth|
    (<= 1 is within tolerance); inf when x has NaN/Inf where the truth is finite."""
    import torch
    tol = PARITY_TOLERANCE.get(dtype_name, PARITY_TOLERANCE["float32"])
    # On the truth's device, in its precision (fp64 on a CPU, fp32 on a GPU): a 4 x 2048 x 32000 logits
    # tensor compared in fp64 on the CPU took seconds per kernel and seed.
    wide = torch.float64 if truth.device.type == "cpu" else torch.float32
    t = truth.to(wide)
    o = x.to(device=truth.device, dtype=wide)
    if o.shape != t.shape:
        return float("inf")
    if t.numel() == 0:
        return 0.0
    if bool((~torch.isfinite(o) & torch.isfinite(t)).any()):
        return float("inf")
    finite = torch.isfinite(t)
    if t.dim() >= 2 and t.shape[-1] > 0:
        rms = torch.sqrt((torch.where(finite, t, torch.zeros_like(t)) ** 2).mean(dim=-1, keepdim=True))
        scale = torch.clamp(rms, min=1.0).expand(t.shape)
    else:
        scale = torch.clamp(torch.sqrt((torch.where(finite, t, torch.zeros_like(t)) ** 2).mean()), min=1.0)
    eps = torch.finfo(getattr(torch, dtype_name)).eps if dtype_name in PARITY_TOLERANCE else 0.0
    allowed = tol["atol"] * scale + (tol["rtol"] + eps) * t.abs()
    err = torch.where(finite, (o - t).abs() / allowed, torch.zeros_like(o))
    return float(err.max()) if err.numel() else 0.0


def parity(ours, reference, dtype_name):
    """(ok, worst normalized error of ours, of eager, the leaf where ours is worst) against a
    _Reference (eager outputs, truth, eager's own errors)."""
    worst, worst_eager, where = 0.0, 0.0, ""
    eager, truth = reference.eager, reference.truth
    if len(ours) != len(eager):
        return False, float("inf"), 0.0, "the model returned %d tensors, %d expected" % (len(ours), len(eager))
    ok = True
    for (path, o), (_, t), ee in zip(ours, truth, reference.eager_errors):
        eo = _normalized_error(o, t, dtype_name)
        if eo > worst:
            worst, where = eo, path
        worst_eager = max(worst_eager, ee)
        if eo > max(1.0, WORSE_THAN_EAGER * ee):
            ok = False
    return ok, worst, worst_eager, where


class _Reference:
    """One seed's eager outputs and truth (on the device), and eager's own error against the truth."""

    def __init__(self, eager, truth, dtype_name):
        self.eager, self.truth = eager, truth
        self.eager_errors = [_normalized_error(e, t, dtype_name) for (_, e), (_, t) in zip(eager, truth)]


class _Original:
    """The model as the user wrote it, in this process: the eager outputs and a truth in higher
    precision (fp64 on the CPU, fp32 on a GPU) for every seed."""

    def __init__(self, model_path, device, dtype_name):
        import akprofile
        import torch
        os.environ["AUTOKERNEL_DEVICE"] = device
        self.path, self.device, self.dtype_name = model_path, device, dtype_name
        self.module = akprofile.load_model_module(model_path)
        import copy
        torch.manual_seed(0)
        model = akprofile._call_user(model_path, "get_model()", self.module.get_model)
        wide = torch.float64 if device == "cpu" else torch.float32
        # One construction (a billion-parameter model takes seconds to initialise), two precisions.
        self.wide = copy.deepcopy(model).to(device=device, dtype=wide).eval()
        self.model = model.to(device=device, dtype=getattr(torch, dtype_name)).eval()
        self.wide_dtype = wide

    def outputs(self, seed):
        import akprofile
        import torch
        from modelplug.child import leaves
        torch.manual_seed(seed)
        inputs = akprofile._call_user(self.path, "get_inputs()", self.module.get_inputs)
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        with torch.no_grad():
            eager = self.model(*akprofile._to_device(list(inputs), self.device, getattr(torch, self.dtype_name)))
            truth = self.wide(*akprofile._to_device(list(inputs), self.device, self.wide_dtype))
        return _Reference([(p, t.detach()) for p, t in leaves(eager)], [(p, t.detach()) for p, t in leaves(truth)],
                          self.dtype_name)


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def plug_sha():
    """sha256 over the plug package's sources (name and bytes of each, in name order)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plug")
    h = hashlib.sha256()
    for name in sorted(n for n in os.listdir(root) if n.endswith(".py")):
        with open(os.path.join(root, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def _reps(runner, variant, target_s):
    """Forwards per timed sample so that one sample takes about target_s (2..50)."""
    runner.request({"op": "activate", "variant": variant})
    runner.request({"op": "time", "variant": variant, "reps": 1, "flush": True})
    t0 = time.perf_counter()
    runner.request({"op": "time", "variant": variant, "reps": 2, "flush": True})
    per = (time.perf_counter() - t0) / 2
    return int(max(2, min(50, target_s / max(per, 1e-4))))


class _Timer:
    """Times variants prepared in the model runner with this process's clock, alternating."""

    def __init__(self, runner, reps):
        self.runner, self.reps = runner, reps

    def sample(self, variant):
        self.runner.request({"op": "activate", "variant": variant})
        t0 = time.perf_counter_ns()
        reply = self.runner.request({"op": "time", "variant": variant, "reps": self.reps, "flush": True})
        elapsed = (time.perf_counter_ns() - t0) / 1e3 / self.reps
        if not reply.get("ok"):
            raise RuntimeError("timing %s failed: %s" % (variant, reply.get("error")))
        return elapsed

    def compare(self, variants, rounds):
        """{variant: median us per forward}; rounds alternate the order. Each variant first runs one
        untimed sample: on the H100 (session 25) the first sample of the Llama's final set took 15.3 ms
        a forward against 8.5-9.2 for the six after it, and a check of a few rounds cannot carry that."""
        for v in variants:
            self.sample(v)
        samples = {v: [] for v in variants}
        for r in range(rounds):
            order = variants if r % 2 == 0 else list(reversed(variants))
            for v in order:
                samples[v].append(self.sample(v))
        return {v: statistics.median(s) for v, s in samples.items()}, samples


def handle(args, ctx=None):
    from harness.timing import stats
    from harness.runners import pool
    from harness.isolation import sandbox
    t_start = time.perf_counter()
    run_dir, device, dtype_name = args["run_dir"], args.get("device") or "cpu", args.get("dtype") or "float32"
    model_path = args.get("model_path") or ""
    if not model_path or not os.path.isfile(model_path):
        raise VerifyError("the run's model file %s is missing" % (model_path or "(none recorded)"))
    recorded_sha = args.get("model_sha256")
    if recorded_sha and _sha(model_path) != recorded_sha:
        raise VerifyError("%s changed since it was profiled (sha256 %s..., recorded %s...): re-profile, or "
                          "verify with --allow-changed-model" % (model_path, _sha(model_path)[:12], recorded_sha[:12]))
    global PLUG_SHA
    PLUG_SHA = PLUG_SHA or plug_sha()
    mode = check_mode(args)
    sites, recorded = call_sites(run_dir)
    if not recorded:
        raise VerifyError("%s was profiled before call sites were recorded: profile the model again "
                          "(autokernel-cli profile) to verify it" % os.path.join(run_dir, "profile.json"))
    seeds = [int(s) for s in args.get("seeds") or [random.SystemRandom().getrandbits(31) for _ in range(3)]]
    previous = args.get("previous") or {}
    prev_kernels = {k["kernel"]: k for k in previous.get("kernels", [])} if isinstance(previous, dict) else {}
    kernels = []
    result_kernels = {}
    for k in args.get("kernels", []):
        entry = {"kernel": k["name"], "op_type": k["op_type"], "sites": sites.get(k["name"], []),
                 "plugged": False, "in_final_set": False}
        if k.get("callable"):
            entry["callable"] = k["callable"]       # the folder's contract's callable (a NeoX rotary's function)
        try:
            entry["blob_sha256"] = _sha(k["path"])
        except OSError as e:
            entry["why_not"] = "%s cannot be read: %s" % (k["path"], e.strerror or e)
            result_kernels[k["name"]] = entry
            continue
        result_kernels[k["name"]] = entry
        if k.get("pytorch_wins") is not None:
            against = ("eager PyTorch, what it replaces in an eager model" if k.get("pytorch_wins_against") == "eager"
                       else "the best PyTorch (eager or compiled)")
            entry["why_not"] = ("PyTorch wins: this kernel's head is %.2fx %s, so it is not offered for the "
                                "model" % (k["pytorch_wins"], against))
            continue
        if not entry["sites"]:
            entry["why_not"] = "no call site recorded for this kernel folder in profile.json"
            continue
        kernels.append(dict(k, sites=entry["sites"]))

    _progress(ctx, "running the original model", 0.02)
    original = _Original(model_path, device, dtype_name)
    references = {s: original.outputs(s) for s in seeds}

    sb = sandbox.Sandbox(device, "model", os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         extra_ro=[os.path.dirname(os.path.abspath(model_path)), run_dir],
                         private_shm=True,     # torch.compile's worker pool needs multiprocessing's locks
                         serve="modelplug.child:serve")
    scratch = tempfile.mkdtemp(prefix="verify-", dir=sb.root)
    try:
        sb.start()
        runner = pool.Runner(sb.conn, "the model runner", pool.Deadline(float(args.get("time_limit_s") or 1800)),
                               lambda: ": " + sb.log_tail(1500))
        reply = runner.request({"op": "load", "model_path": model_path, "device": device, "dtype": dtype_name,
                                "kernels": [{"name": k["name"], "op_type": k["op_type"], "path": k["path"],
                                             "sites": k["sites"], "dtype": k.get("dtype") or dtype_name,
                                             "callable": k.get("callable") or ""}
                                            for k in kernels]})
        if not reply.get("ok"):
            raise VerifyError("the model runner could not load the model: %s" % reply.get("error"))
        importable = []
        for k in kernels:
            why = reply["kernels"].get(k["name"], "")
            if why:
                result_kernels[k["name"]]["why_not"] = why
            else:
                importable.append(k["name"])

        def outputs_with(names, seed, tag):
            runner.request({"op": "inputs", "seed": seed})
            r = runner.request({"op": "run", "kernels": names, "dir": scratch, "prefix": tag})
            if not r.get("ok"):
                return None, r.get("error"), []
            return _read_outputs(scratch, r["outputs"], device), None, r.get("plug", [])

        # 1. Each kernel alone: plugged where, parity on every seed.
        passing = []
        for i, name in enumerate(importable):
            _progress(ctx, "parity of %s" % name, 0.05 + 0.35 * i / max(1, len(importable)))
            entry = result_kernels[name]
            reuse = prev_kernels.get(name)
            if reuse and reuse.get("blob_sha256") == entry["blob_sha256"] and reuse.get("parity") and \
                    previous.get("device") == device and previous.get("dtype") == dtype_name and \
                    previous.get("plug_sha256") == PLUG_SHA and previous.get("model_sha256") == _sha(model_path):
                entry.update({k: reuse[k] for k in ("plugged", "parity", "plug") if k in reuse})
                entry["reused"] = True
                if entry.get("parity", {}).get("ok") and entry.get("plugged"):
                    passing.append(name)
                continue
            worst, worst_eager, where, ok, plug_report, error = 0.0, 0.0, "", True, [], None
            for seed in seeds:
                ours, error, plug_report = outputs_with([name], seed, "p")
                if ours is None:
                    ok = False
                    break
                good, w, we, at = parity(ours, references[seed], dtype_name)
                if w >= worst:
                    worst, where = w, at
                worst_eager = max(worst_eager, we)
                ok = ok and good
            rep = plug_report[0] if plug_report else {}
            entry["plug"] = rep
            entry["plugged"] = bool(rep.get("routed_calls"))
            entry["parity"] = {"ok": bool(ok and error is None), "error": _finite(worst), "eager_error": _finite(worst_eager),
                               "worst_output": where, "seeds": seeds}
            if error is not None:
                entry["parity"]["raised"] = error
                entry["why_not"] = "the model raised with this kernel plugged in: %s" % error
            elif not entry["plugged"]:
                reasons = list((rep.get("unplugged_sites") or {}).values()) + list((rep.get("fallback_calls") or {}).keys())
                entry["why_not"] = "not plugged: %s" % ("; ".join(sorted(set(reasons))) or "no call reached it")
            elif not ok:
                entry["why_not"] = ("parity: output %s is %.3g tolerances from the truth (eager: %.3g)"
                                    % (where, worst, worst_eager))
            if entry["plugged"] and entry["parity"]["ok"]:
                passing.append(name)

        # 1b. The cold re-check (harness/recheck.py, #43 item 3): each kernel that passed is benched
        #     again from nothing, paired with its PyTorch reference on its contract, and stays only if
        #     the 10th percentile of the paired ratios is above 1. Before the in-model timing, so that
        #     leave-one-out judges each kernel among the ones that can be offered: on the H100 (session
        #     24) five matmuls the re-check withheld afterwards, whose Triton launches cost more host
        #     time than cuBLAS's, were still in ViT's set and made its add + LayerNorm region look like
        #     -24 % there (+3 % alone).
        if passing and args.get("recheck", True):
            _progress(ctx, "cold re-check of %d kernels" % len(passing), 0.42)
            passing = _cold_recheck(passing, kernels, args, device, result_kernels)

        # 2. In-model effect of each (leave one out of the set of the kernels that passed and were
        #    offered by the re-check), then drop the ones that slow the model down.
        reps, rounds = int(args.get("reps") or 0), int(args.get("rounds") or 7)
        runner.request({"op": "inputs", "seed": seeds[0]})
        runner.request({"op": "prepare", "variant": "eager", "kernels": []})
        reps = reps or _reps(runner, "eager", 0.25)
        timer = _Timer(runner, reps)
        final = list(passing)
        compiled, compile_seconds = {}, {}      # compiled variant -> the kernels it holds; its compile time

        def prepare(variant, names, compile_it):
            """An eager variant, or a compiled copy (reused while it holds the same kernels)."""
            if not compile_it:
                runner.request({"op": "prepare", "variant": variant, "kernels": names})
                return None
            if compiled.get(variant) == tuple(names):
                return None
            t0 = time.perf_counter()
            r = runner.request({"op": "prepare", "variant": variant, "kernels": names, "compile": True, "warmup": 3})
            compile_seconds[variant] = compile_seconds.get(variant, 0.0) + time.perf_counter() - t0
            compiled[variant] = tuple(names) if r.get("ok") else None
            return None if r.get("ok") else r.get("error")

        def prepare_mode(variant, names):
            error = prepare(variant, names, mode == "compile")
            if error:
                raise VerifyError("torch.compile of the model with %s failed: %s" % (", ".join(names) or "no kernel", error))
        # Selection runs in the verification's mode: "compile" / "compile+ours" there, "eager" / "final" here.
        base, with_set, only = ("compile", "compile+ours", "compile-only:") if mode == "compile" else ("eager", "final", "only:")
        notes = []              # selection steps taken before the final set's own (the add-back)
        if passing:
            _progress(ctx, "in-model effect of %d kernels" % len(passing), 0.45)
            effects = {"eager": _leave_one_out(timer, runner, lambda v, n: prepare(v, n, False), "eager", "ours",
                                               "without:", passing, rounds)}
            if mode == "compile":
                _progress(ctx, "in-model effect of %d kernels under torch.compile (%d compiles)"
                          % (len(passing), len(passing) + 2), 0.5)
                effects["compile"] = _leave_one_out(timer, runner, prepare_mode, "compile", "compile+ours",
                                                    "compile-without:", passing, rounds)
            sites_us = site_times(run_dir)
            deciding = effects[mode]
            limit = max(NOISE_FLOOR_PCT, deciding["noise_pct"])
            for name in passing:
                entry = result_kernels[name]
                entry["effect_pct"] = deciding["effect_pct"][name]
                entry["versus"] = versus(name, effects, sites_us.get(name))
                if entry["effect_pct"] < -limit:
                    final.remove(name)
                    entry["why_not"] = ("slows the model down%s: %.2f%% (removing it makes the model faster beyond "
                                        "the %.2f%% noise)" % (" under torch.compile" if mode == "compile" else "",
                                                               entry["effect_pct"], limit))
            if mode == "eager":
                final = _add_back(timer, runner, prepare_mode, base, only, final,
                                  [n for n in passing if n not in final], rounds, result_kernels, notes)
        for name in final:
            result_kernels[name]["in_final_set"] = True

        # 3. The final set: parity again on every seed, then eager against eager + the set. Leave-one-out
        #    judges each kernel against the others, so a set can still lose to eager as a whole
        #    (interactions, or effects inside the noise that add up): then each kernel is timed alone
        #    against eager and only the ones that win alone stay, and if that set loses too nothing is
        #    offered. The final set is never slower than the original beyond noise.
        def parity_of(names):
            result = {"ok": True, "error": 0.0, "eager_error": 0.0, "seeds": seeds}
            for seed in seeds:
                ours, error, _ = outputs_with(names, seed, "f")
                good, w, we, at = parity(ours, references[seed], dtype_name) if ours is not None else (False, float("inf"), 0.0, error)
                result["ok"] = result["ok"] and good
                if w >= result["error"]:
                    result["error"], result["worst_output"] = _finite(w), at
                result["eager_error"] = max(result["eager_error"], _finite(we) or 0.0)
            return result

        def drop(names, why):
            for name in names:
                result_kernels[name]["in_final_set"] = False
                result_kernels[name]["why_not"] = why

        def parity_or_nothing(names):
            """The set's parity on every seed, and the set itself; one that fails together is dropped whole."""
            result = parity_of(names)
            if result["ok"]:
                return result, names
            drop(names, "the set failed parity together")
            result["note"] = "the set failed parity together; nothing is offered"
            return result, []

        selection = (["leave-one-out" + (" under torch.compile" if mode == "compile" else "")]
                     if passing else []) + notes
        final_parity = {"ok": True, "error": 0.0, "eager_error": 0.0, "seeds": seeds}
        if final:
            _progress(ctx, "parity of the final set", 0.65)
            final_parity, final = parity_or_nothing(final)
        if final:
            _progress(ctx, "the final set against %s" % base, 0.7)
            final, final_parity = _against_base(timer, prepare_mode, base, with_set, only, final, final_parity,
                                                rounds, result_kernels, selection, drop, parity_or_nothing)
        for name in final:
            result_kernels[name]["in_final_set"] = True
        _progress(ctx, "timing the model", 0.75)
        prepare("final", final, False)
        timings = {}
        variants = ["eager", "final"]
        if args.get("compile", True):
            # With no final set, compile + ours is compile: not compiled (minutes on a large model) twice.
            for v, ks in (("compile", []), ("compile+ours", final)) if final else (("compile", []),):
                _progress(ctx, "torch.compile (max-autotune-no-cudagraphs) of the %s" %
                          ("original model" if v == "compile" else "model with the final set"),
                          0.78 if v == "compile" else 0.88)
                error = prepare(v, ks, True)
                if error:
                    timings[v + "_error"] = error
                else:
                    variants.append(v)
        medians, samples = timer.compare(variants, rounds)
        names = {"eager": "eager", "final": "eager+ours", "compile": "compile", "compile+ours": "compile+ours"}
        for v in variants:
            # Speedups are medians of per-round ratios (paired: both sides of a ratio ran back to back).
            timings[names[v]] = {"median_us": medians[v], "speedup_vs_eager": _paired_ratio(samples["eager"], samples[v]),
                                 "noise_pct": stats.noise_pct(samples[v]), "samples_us": samples[v]}
        if "compile" in medians and "compile+ours" in medians:
            timings["compile+ours"]["speedup_vs_compile"] = _paired_ratio(samples["compile"], samples["compile+ours"])
            timings["compile_advice"] = _compile_advice(timings, samples)
    finally:
        sb.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    import torch
    triton_version = None
    try:
        import triton
        triton_version = triton.__version__
    except Exception:  # noqa: BLE001
        pass
    return {
        "format": "autokernel-verification", "version": 1,
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "model_path": model_path, "model_sha256": _sha(model_path), "device": device, "dtype": dtype_name,
        "plug_sha256": PLUG_SHA,
        "device_name": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
        "torch": torch.__version__, "triton": triton_version, "python": sys.version.split()[0],
        "seeds": seeds, "reps_per_sample": timer.reps, "rounds": rounds,
        "kernels": list(result_kernels.values()),
        "final_set": final, "selection": selection, "parity": final_parity, "timings": timings,
        "compile_seconds": compile_seconds, "mode": mode,
        # The final set against the mode's own baseline: eager + ours vs eager, compile + ours vs compile.
        "mode_speedup": (timings.get("compile+ours", {}).get("speedup_vs_compile", 1.0) if mode == "compile"
                         else timings["eager+ours"]["speedup_vs_eager"]) if final else 1.0,
        # Nothing plugged is the original model: its speedup is 1 by definition, not a noisy ratio.
        "model_speedup": timings["eager+ours"]["speedup_vs_eager"] if final else 1.0,
        "seconds": time.perf_counter() - t_start,
        "isolation": sb.describe(),
    }


def _leave_one_out(timer, runner, prepare, base, with_set, prefix, passing, rounds):
    """Each kernel's in-model effect: the model with all passing kernels against the model without it
    (alternating rounds). {"effect_pct": {name: % of the model it saves}, "saved_us": {name: us},
    "noise_pct"}. The leave-one-out variants are freed after (under compile each is a compiled copy)."""
    from harness.timing import stats
    prepare(base, [])
    prepare(with_set, passing)
    variants = [base, with_set]
    for name in passing:
        prepare(prefix + name, [n for n in passing if n != name])
        variants.append(prefix + name)
    medians, samples = timer.compare(variants, rounds)
    for name in passing:
        runner.request({"op": "release", "variant": prefix + name})
    out = {"effect_pct": {}, "saved_us": {}, "noise_pct": stats.noise_pct(samples[with_set])}
    for name in passing:
        without = medians[prefix + name]
        out["saved_us"][name] = without - medians[with_set]
        out["effect_pct"][name] = 100.0 * out["saved_us"][name] / without
    return out


def versus(name, effects, sites_eager_us):
    """One kernel's ours vs eager vs compile, from the leave-one-out effects in each mode measured
    ({"eager": ..., "compile": ...}) and its sites' profiled eager time: what it saves per forward in
    each mode (negative: PyTorch's own code, or inductor's for those sites, is faster), and the sites'
    time estimated three ways where all are known (ours = eager - saved in eager; compile = ours +
    saved under compile: what inductor's code for the sites costs, fusions our opaque op prevents included)."""
    out = {"sites_eager_us": sites_eager_us}
    for mode in MODES:
        e = effects.get(mode)
        out[mode] = None if e is None else {"saved_us": e["saved_us"][name], "effect_pct": e["effect_pct"][name],
                                            "noise_pct": e["noise_pct"]}
    if out["compile"] is None:
        out["compile_note"] = "not measured: verify --mode compile measures each kernel under torch.compile"
    else:
        c = out["compile"]
        out["compile_wins"] = c["effect_pct"] < -max(NOISE_FLOOR_PCT, c["noise_pct"])
        if sites_eager_us is not None and out["eager"] is not None:
            ours = sites_eager_us - out["eager"]["saved_us"]
            out["sites_us"] = {"eager": sites_eager_us, "ours": ours, "compile": ours + c["saved_us"],
                               "estimated": True}
    return out


def _add_back(timer, runner, prepare, base, only, final, dropped, rounds, result_kernels, notes):
    """Leave-one-out judges each kernel against all the others, so kernels that slow each other down
    when plugged together all look like losers (H100, the llama example: add + RMSNorm +22.9 % alone,
    -41 % left out of seven; docs/benchmarks.md). Each dropped kernel is timed alone against the
    baseline; those that win alone beyond the noise are added back one at a time, best first, each only
    if the set with it beats the set without it beyond the noise. Eager mode only: under compile every
    variant is a compile. Returns the grown set; each kernel's entry says what was found."""
    from harness.timing import stats
    if not dropped:
        return final
    for name in dropped:
        prepare(only + name, [name])
    _, samples = timer.compare([base] + [only + n for n in dropped], rounds)
    limit = max(NOISE_FLOOR_PCT, stats.noise_pct(samples[base]))
    alone = {n: _gain_pct(samples[base], samples[only + n]) for n in dropped}
    for name in dropped:
        runner.request({"op": "release", "variant": only + name})
        result_kernels[name]["alone_effect_pct"] = alone[name]
    # A second chance must not let noise in (a busy CPU's 3 rounds once put a kernel that sleeps 10 ms
    # per call +26 % "alone"): the kernel must win in every paired round, alone and when added.
    winners = sorted((n for n in dropped if alone[n] > limit and _every_round(samples[base], samples[only + n])),
                     key=lambda n: -alone[n])
    grown = list(final)
    for step, name in enumerate(winners):
        without, with_it = "grow:%d" % step, "grow:%d+" % step
        prepare(without, grown)
        prepare(with_it, grown + [name])
        _, grow_samples = timer.compare([without, with_it], rounds)
        noise = max(NOISE_FLOOR_PCT, stats.noise_pct(grow_samples[without]), stats.noise_pct(grow_samples[with_it]))
        gain = _gain_pct(grow_samples[without], grow_samples[with_it])
        for v in (without, with_it):
            runner.request({"op": "release", "variant": v})
        entry = result_kernels[name]
        if gain > noise and _every_round(grow_samples[without], grow_samples[with_it]):
            grown.append(name)
            entry["leave_one_out_pct"], entry["effect_pct"] = entry.get("effect_pct"), gain
            entry.pop("why_not", None)
        else:
            entry["why_not"] = ("%s; alone it wins %+.2f%%, but added to %s it gains %.2f%% (noise %.2f%%)"
                                % (entry.get("why_not", ""), alone[name], ", ".join(grown) or "nothing", gain,
                                   noise))
    if winners:
        notes.append("added back one at a time, best alone first: %s"
                     % ", ".join("%s %s" % (n, "kept" if n in grown else "not kept") for n in winners))
    return grown


def _against_base(timer, prepare, base, with_set, only, final, final_parity, rounds, result_kernels, selection,
                  drop, parity_or_nothing):
    """The final set against the mode's baseline (eager, or compile alone), paired. Leave-one-out judges
    each kernel against the others, so a set can still lose as a whole (interactions, or effects inside
    the noise that add up): then each kernel is timed alone against the baseline and only the ones
    that win alone stay, and if that set loses too nothing is offered. Returns (final, its parity)."""
    from harness.timing import stats
    prepare(with_set, final)
    gain, limit = _paired_gain(timer, base, with_set, rounds)
    if gain < -limit and len(final) > 1:
        alone = {}
        for name in final:
            prepare(only + name, [name])
        _, samples = timer.compare([base] + [only + n for n in final], rounds)
        for name in final:
            alone[name] = _gain_pct(samples[base], samples[only + name])
            result_kernels[name]["alone_effect_pct"] = alone[name]
        losers = [n for n in final if alone[n] <= max(NOISE_FLOOR_PCT, stats.noise_pct(samples[base]))]
        drop(losers, "the set was %.2f%% slower than %s together and this kernel does not win alone (%s)"
             % (-gain, base, ", ".join("%s %+.2f%%" % (n, alone[n]) for n in losers)))
        final = [n for n in final if n not in losers]
        selection.append("each alone against %s (the set lost to %s together: %.2f%%)" % (base, base, gain))
        if final:
            final_parity, final = parity_or_nothing(final)
        if final:
            prepare(with_set, final)
            gain, limit = _paired_gain(timer, base, with_set, rounds)
    if final and gain < -limit:
        drop(final, "the final set was %.2f%% slower than %s together (noise %.2f%%): nothing is offered"
             % (-gain, base, limit))
        selection.append("none: the set lost to %s (%.2f%%)" % (base, gain))
        final = []
    return final, final_parity


def _cold_recheck(final, kernels, args, device, result_kernels):
    """The kernels of `final` whose cold re-check offers them; each entry keeps its distribution
    ("recheck": recheck.summary's fields), the withheld ones say why."""
    from harness import recheck
    by_name = {k["name"]: k for k in kernels}
    kept = []
    for name in final:
        k = by_name[name]
        r = recheck.run({"kernel_path": k["path"], "device": device, "dtype": k.get("dtype"),
                         "contract": k.get("contract"), "pairs": args.get("recheck_pairs"),
                         "allow_reduced_precision": bool(args.get("allow_reduced_precision")),
                         "time_limit_s": min(600.0, float(args.get("time_limit_s") or 600))})
        entry = result_kernels[name]
        entry["recheck"] = r
        if r["offered"]:
            kept.append(name)
        else:
            entry["in_final_set"] = False
            entry["why_not"] = "cold re-check: %s" % r["why"]
    return kept


def _compile_advice(timings, samples):
    """What a torch.compile user should do with the final set: the set was chosen in eager mode,
    and an opaque custom op can cost inductor a fusion or a better matmul than ours (gpt2 on the
    H200: the LM head and layernorm win 1.54x in eager, and lose 0.89x against compile alone)."""
    from harness.timing import stats
    ratio = timings["compile+ours"]["speedup_vs_compile"]
    noise = max(NOISE_FLOOR_PCT, stats.noise_pct(samples["compile"]), stats.noise_pct(samples["compile+ours"]))
    pct = (ratio - 1.0) * 100.0
    if pct > noise:
        return "with torch.compile: compile the model after apply(); %.3fx faster than compile alone" % ratio
    if pct < -noise:
        return ("with torch.compile: compile the original model, without apply(); the kernels make a compiled "
                "model slower (%.3fx vs compile alone, noise %.2g%%): their gain is in eager mode" % (ratio, noise))
    return ("with torch.compile: no measurable difference (%.3fx vs compile alone, noise %.2g%%): compile alone "
            "is as fast" % (ratio, noise))


def _every_round(base, other):
    """Whether `other` was faster than `base` in every paired round."""
    return all(o < b for b, o in zip(base, other))


def _paired_ratio(base, other):
    """Median over rounds of base / other: >1 when `other` is faster."""
    return statistics.median(b / o for b, o in zip(base, other) if o > 0)


def _gain_pct(base, other):
    """How much faster `other` is than `base`, % of base (paired rounds)."""
    return 100.0 * (1.0 - 1.0 / _paired_ratio(base, other))


def _paired_gain(timer, base, other, rounds):
    """(gain %, noise %) of variant `other` against `base`, timed alternating."""
    from harness.timing import stats
    _, samples = timer.compare([base, other], rounds)
    limit = max(NOISE_FLOOR_PCT, stats.noise_pct(samples[base]), stats.noise_pct(samples[other]))
    return _gain_pct(samples[base], samples[other]), limit


def _finite(x):
    return x if x == x and x not in (float("inf"), float("-inf")) else None
