"""The `inmodel` worker op: the model's verdict on one kept kernel during the run (#38 item 5).

Soon after the loop keeps a kernel, it asks whether the harness's win shows inside the model: the
kernel alone plugged into the model at its call sites against the model as written ("eager"), a
short paired A/B timed with alternating rounds, after a parity check on one seed. It is `verify`'s
machinery (verify.py: the original model in this process, the kernel only in the sandboxed model
runner, child.py) cut down to one kernel, one seed and a few rounds, so it costs little.

Alone against eager, not leave-one-out of the run's current set: the set changes with every keep of
every kernel, and a kernel's own effect is what the move-on rule needs; `verify` at the end still
judges the set as a whole (interactions included). See docs/model-speedup.md.

args  {run_dir, model_path, device, dtype, kernels: [one {name, op_type, path, dtype, callable?}],
       seeds: [seed], rounds, reps (0: sized to ~target_s per sample), target_s, time_limit_s, model_sha256?}
reply {kernel, blob_sha256, device, dtype, plugged, routed_calls, parity: {ok, error, eager_error,
       worst_output, raised?}, effect_pct, noise_pct, limit_pct, positive, why, rounds, reps, seconds}
effect_pct: % of the model's time the kernel saves (paired median over rounds; > 0 is faster);
positive: effect_pct > limit_pct (the noise of the rounds, at least NOISE_FLOOR_PCT).
"""

import os
import shutil
import tempfile
import time

from modelplug.verify import (NOISE_FLOOR_PCT, VerifyError, _finite, _gain_pct, _Original, _read_outputs, _reps,
                              _sha, _Timer, call_sites, parity)


def _check_args(args):
    kernels = args.get("kernels") or []
    if len(kernels) != 1:
        raise VerifyError("inmodel checks one kernel at a time (got %d)" % len(kernels))
    model_path = args.get("model_path") or ""
    if not model_path or not os.path.isfile(model_path):
        raise VerifyError("the run's model file %s is missing" % (model_path or "(none recorded)"))
    recorded_sha = args.get("model_sha256")
    if recorded_sha and _sha(model_path) != recorded_sha:
        raise VerifyError("%s changed since it was profiled: re-profile to check kernels in it" % model_path)
    return kernels[0], model_path


def handle(args, ctx=None):
    from harness.timing import stats
    from harness.runners import pool
    from harness.isolation import sandbox
    started = time.perf_counter()
    k, model_path = _check_args(args)
    run_dir, device, dtype_name = args["run_dir"], args.get("device") or "cpu", args.get("dtype") or "float32"
    seed = int((args.get("seeds") or [0])[0])
    rounds = max(2, int(args.get("rounds") or 5))
    out = {"kernel": k["name"], "blob_sha256": _sha(k["path"]), "device": device, "dtype": dtype_name,
           "plugged": False, "routed_calls": 0, "parity": {"ok": False}, "effect_pct": None, "noise_pct": None,
           "limit_pct": None, "positive": False, "why": "", "rounds": rounds, "reps": 0, "seed": seed}
    sites = call_sites(run_dir)[0].get(k["name"], [])
    if not sites:
        out["why"] = "no call site recorded for this kernel folder in profile.json"
        out["seconds"] = time.perf_counter() - started
        return out
    if ctx is not None:
        ctx.progress("in-model check of %s" % k["name"], 0.1)
    reference = _Original(model_path, device, dtype_name).outputs(seed)
    sb = sandbox.Sandbox(device, "model", os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         extra_ro=[os.path.dirname(os.path.abspath(model_path)), run_dir], private_shm=True,
                         serve="modelplug.child:serve")
    scratch = tempfile.mkdtemp(prefix="inmodel-", dir=sb.root)
    try:
        sb.start()
        runner = pool.Runner(sb.conn, "the model runner", pool.Deadline(float(args.get("time_limit_s") or 600)),
                               lambda: ": " + sb.log_tail(1500))
        reply = runner.request({"op": "load", "model_path": model_path, "device": device, "dtype": dtype_name,
                                "kernels": [{"name": k["name"], "op_type": k["op_type"], "path": k["path"],
                                             "sites": sites, "dtype": k.get("dtype") or dtype_name,
                                             "callable": k.get("callable") or ""}]})
        if not reply.get("ok"):
            raise VerifyError("the model runner could not load the model: %s" % reply.get("error"))
        why = reply["kernels"].get(k["name"], "")
        if why:
            out["why"] = why
            return out
        _parity(runner, k["name"], seed, scratch, reference, device, dtype_name, out)
        if not (out["plugged"] and out["parity"]["ok"]):
            return out
        runner.request({"op": "prepare", "variant": "eager", "kernels": []})
        runner.request({"op": "prepare", "variant": "with", "kernels": [k["name"]]})
        out["reps"] = int(args.get("reps") or 0) or _reps(runner, "eager", float(args.get("target_s") or 0.05))
        _, samples = _Timer(runner, out["reps"]).compare(["eager", "with"], rounds)
        effect = _gain_pct(samples["eager"], samples["with"])
        noise = max(stats.noise_pct(samples["eager"]), stats.noise_pct(samples["with"]))
        limit = max(NOISE_FLOOR_PCT, noise)
        out.update({"effect_pct": effect, "noise_pct": noise, "limit_pct": limit, "positive": effect > limit})
        if not out["positive"]:
            out["why"] = ("no gain in the model beyond the noise: %+.2f%% (noise %.2f%%)" % (effect, limit))
        return out
    finally:
        sb.stop()
        shutil.rmtree(scratch, ignore_errors=True)
        out["seconds"] = time.perf_counter() - started


def _parity(runner, name, seed, scratch, reference, device, dtype_name, out):
    """One forward with the kernel plugged: routed where, parity against the truth on `seed`."""
    runner.request({"op": "inputs", "seed": seed})
    r = runner.request({"op": "run", "kernels": [name], "dir": scratch, "prefix": "c"})
    if not r.get("ok"):
        out["parity"] = {"ok": False, "raised": r.get("error")}
        out["why"] = "the model raised with this kernel plugged in: %s" % r.get("error")
        return
    rep = (r.get("plug") or [{}])[0]
    out["routed_calls"] = int(rep.get("routed_calls") or 0)
    out["plugged"] = out["routed_calls"] > 0
    ok, worst, worst_eager, where = parity(_read_outputs(scratch, r["outputs"], device), reference, dtype_name)
    out["parity"] = {"ok": bool(ok), "error": _finite(worst), "eager_error": _finite(worst_eager),
                     "worst_output": where}
    if not out["plugged"]:
        reasons = list((rep.get("unplugged_sites") or {}).values()) + list((rep.get("fallback_calls") or {}).keys())
        out["why"] = "not plugged: %s" % ("; ".join(sorted(set(reasons))) or "no call reached it")
    elif not ok:
        out["why"] = ("parity: output %s is %.3g tolerances from the truth (eager: %.3g)"
                      % (where, worst, worst_eager))
