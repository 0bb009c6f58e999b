"""GPU probe of modelplug under torch.compile: plugs the Triton starter kernel of every op type at
every module of a model file, then reports per kernel the calls routed and fallen back, parity
against eager, graph breaks under torch.compile, and eager / eager+starters / compile /
compile+starters medians. Not a benchmark of our kernels (starters are plain): it shows whether
plugging works and what compile makes of it. Usage: plug_probe.py MODEL_FILE [MODE]
"""
import importlib.util
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))
from modelplug import plug  # noqa: E402

OPS = ("matmul", "softmax", "layernorm", "rmsnorm", "flash_attention", "fused_mlp", "cross_entropy",
       "rotary_embedding", "reduce", "gelu", "silu")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def leaves(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    if isinstance(out, dict):
        out = tuple(out.values())
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in leaves(o)]
    return []


def main():
    model_file = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "max-autotune-no-cudagraphs"
    os.environ.setdefault("AUTOKERNEL_DEVICE", "cuda")
    mod = load(model_file, "probe_model")
    dtype = mod.get_dtype()
    torch.manual_seed(0)
    model = mod.get_model().to("cuda", dtype).eval()
    inputs = [t.cuda() if not t.is_floating_point() else t.to("cuda", dtype) for t in mod.get_inputs()]
    sites = [n or "<model>" for n, _ in model.named_modules()]
    kernels = []
    for op in OPS:
        m = load(os.path.join(ROOT, "agent/python/harness/starters/triton/%s.py" % op), "starter_" + op)
        kernels.append(plug.Kernel("starter-" + op, op, m.kernel_fn, sites, dtype))

    def run(m):
        with torch.no_grad():
            out = m(*inputs)
        torch.cuda.synchronize()
        return out

    def clock(m, reps=5):
        t0 = time.perf_counter()
        for _ in range(reps):
            run(m)
        return (time.perf_counter() - t0) / reps * 1e3

    report = {"model": os.path.basename(model_file), "torch": torch.__version__, "mode": mode}
    ref = [t.float() for t in leaves(run(model))]
    p = plug.Plugged(model, kernels)
    got = [t.float() for t in leaves(run(model))]
    report["eager_plug"] = {k.name: {"routed": k.routed, "fallbacks": k.fallbacks,
                                     "unplugged": len(k.unplugged)} for k in kernels}
    report["eager_max_err"] = max((a - b).abs().max().item() for a, b in zip(ref, got))
    print(json.dumps(report, default=str), file=sys.stderr, flush=True)
    p.restore()
    times = {"eager": [], "eager+starters": []}
    for _ in range(5):
        times["eager"].append(clock(model))
        p = plug.Plugged(model, kernels)
        times["eager+starters"].append(clock(model))
        p.restore()
    import copy
    import importlib
    dynamo = importlib.import_module("torch._dynamo")
    from torch._dynamo.utils import counters
    compiled = {}
    for variant in ("compile", "compile+starters"):
        dynamo.reset()
        counters.clear()
        m = copy.deepcopy(model)
        if variant == "compile+starters":
            ks = []
            for k in kernels:
                op = plug.custom_op(k.name, k.op_type, k.fn)
                ks.append(plug.Kernel(k.name, k.op_type, k.fn, sites, dtype, call=op))
            plug.Plugged(m, ks)
        cm = torch.compile(m, mode=mode)
        t0 = time.perf_counter()
        try:
            out = run(cm)
            run(cm)
        except Exception as exc:  # noqa: BLE001
            report[variant + "_error"] = "%s: %s" % (type(exc).__name__, str(exc)[:2000])
            continue
        report[variant + "_compile_s"] = time.perf_counter() - t0
        report[variant + "_graph_breaks"] = {str(k): v for k, v in counters["graph_break"].items()}
        report[variant + "_max_err"] = max((a - b.float()).abs().max().item() for a, b in zip(ref, leaves(out)))
        compiled[variant] = cm
        print(json.dumps({k: v for k, v in report.items() if k.startswith(variant)}, default=str), file=sys.stderr, flush=True)
    for name, cm in compiled.items():
        times[name] = []
    for _ in range(5):
        for name, cm in compiled.items():
            times[name].append(clock(cm))
    report["median_ms"] = {k: statistics.median(v) for k, v in times.items() if v}
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
