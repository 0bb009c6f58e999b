"""reproduce(model, inputs) of an exported package (copied into it as _reproduce.py; torch only).

Re-times the model as verify did: rounds alternating the original model and the model with the
package's kernels applied, the same number of forwards per sample, one paired ratio (original time /
plugged time) per round. Agreement: the median ratio lies within the spread recorded at export (the
10th to 90th percentile of verify's paired ratios, provenance.json "model"). A different device (GPU
name, else CPU model) is said, with both numbers: on another device a difference is expected, not a
failure.
"""

import json
import os
import platform
import statistics
import time


def _device_here(model):
    import torch
    try:
        p = next(model.parameters())
        if p.is_cuda:
            return torch.cuda.get_device_name(p.device)
    except StopIteration:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _forward_us(model, inputs, reps):
    import torch
    cuda = any(getattr(t, "is_cuda", False) for t in inputs)
    with torch.no_grad():
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(reps):
            model(*inputs)
        if cuda:
            torch.cuda.synchronize()
    return (time.perf_counter_ns() - t0) / 1e3 / reps


def run(here, model, inputs, apply, restore, rounds=15):
    with open(os.path.join(here, "provenance.json")) as f:
        prov = json.load(f)
    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    recorded = prov.get("model") or {}
    reps = int(recorded.get("reps_per_sample") or 3)
    env = prov.get("environment") or {}
    was = env.get("gpu") or env.get("cpu") or "unknown"
    now = _device_here(model)
    out = {"device_recorded": was, "device_here": now, "same_device": was == now, "rounds": rounds,
           "recorded": {k: recorded.get(k) for k in ("p10", "median", "p90", "model_speedup")}}
    if not prov.get("kernels"):
        out.update(agree=True, text="nothing to reproduce: the package holds no kernel (speedup 1 by definition)")
        return out
    _forward_us(model, inputs, 1)            # warm-up of both variants
    apply(model)
    _forward_us(model, inputs, 1)
    restore(model)
    ratios = []
    for r in range(rounds):
        sides = ("eager", "ours") if r % 2 == 0 else ("ours", "eager")
        t = {}
        for side in sides:
            if side == "ours":
                apply(model)
            t[side] = _forward_us(model, inputs, reps)
            if side == "ours":
                restore(model)
        ratios.append(t["eager"] / t["ours"])
    med = statistics.median(ratios)
    lo, hi = recorded.get("p10"), recorded.get("p90")
    out["ratios"] = ratios
    out["median"] = med
    out["agree"] = bool(lo is not None and hi is not None and lo <= med <= hi)
    where = "" if out["same_device"] else " (recorded on %s, measured here on %s: another device)" % (was, now)
    if lo is None:
        out["text"] = "measured %.3fx over the original; nothing recorded to compare with%s" % (med, where)
    elif out["agree"]:
        out["text"] = "agrees: %.3fx over the original, within the recorded %.3fx-%.3fx%s" % (med, lo, hi, where)
    else:
        out["text"] = ("differs: %.3fx over the original, recorded %.3fx (10th-90th percentile %.3fx-%.3fx)%s"
                       % (med, recorded.get("median") or float("nan"), lo, hi, where))
    return out
