"""Host cost of a plugged call (#40: where the time of a small model goes), on the CPU: stacks of tiny
modules (width 8, batch 2, fp32, one thread) timed per module call three ways: eager PyTorch, the CPU
starter called directly (pre-transposed weights, no module), and the same starter plugged by modelplug.
plugged - direct is what the plug itself costs a call (the module call included, which eager pays too).

Cases: linear (nn.Linear: the module forward swapped at plug time), layernorm (nn.LayerNorm, swapped),
rmsnorm (an RMSNorm class, swapped), softmax (F.softmax inside a module: the function-level route,
hooks + TorchFunctionMode). Rounds alternate the variants; each number is the median over rounds, and
the plug's own cost the median of the per-round differences (so a machine that slows down for a while
moves both sides together).

    /usr/bin/python3 tests/bench/plug_overhead.py [--rounds 15] [--json] [--plug-path DIR] [--clock cpu|wall]

--plug-path DIR imports modelplug from DIR instead (another checkout's agent/python: before/after).
"""
import argparse
import copy
import importlib.util
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 48


def starter(op, device="cpu"):
    kind = "cpu" if device == "cpu" else "triton"
    path = os.path.join(ROOT, "agent", "python", "harness", "starters", kind, op + ".py")
    spec = importlib.util.spec_from_file_location("starter_%s_%s" % (kind, op), path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def cases(torch, nn, F):
    """name -> (model of N modules, the kernel's op type, sites, direct(x) calling the starter per module)."""
    class RMSNorm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(n))
            self.eps = 1e-6

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    class Softmax(nn.Module):
        def forward(self, x):
            return F.softmax(x, dim=-1)

    out = {}
    lin = nn.Sequential(*[nn.Linear(8, 8, bias=False) for _ in range(N)])
    fn = starter("matmul").kernel_fn
    wts = [m.weight.t().contiguous() for m in lin]
    out["linear"] = (lin, "matmul", fn, lambda x: _chain(x, [lambda y, wt=wt: fn(y, wt) for wt in wts]))
    ln = nn.Sequential(*[nn.LayerNorm(8) for _ in range(N)])
    fln = starter("layernorm").kernel_fn
    out["layernorm"] = (ln, "layernorm", fln,
                        lambda x: _chain(x, [lambda y, m=m: fln(y, m.weight, m.bias) for m in ln]))
    rms = nn.Sequential(*[RMSNorm(8) for _ in range(N)])
    frms = starter("rmsnorm").kernel_fn
    out["rmsnorm"] = (rms, "rmsnorm", frms, lambda x: _chain(x, [lambda y, m=m: frms(y, m.weight) for m in rms]))
    sm = nn.Sequential(*[Softmax() for _ in range(N)])
    fsm = starter("softmax").kernel_fn
    out["softmax"] = (sm, "softmax", fsm, lambda x: _chain(x, [fsm] * N))
    return out


def _chain(x, fns):
    for f in fns:
        x = f(x)
    return x


CLOCK = time.thread_time      # this thread's CPU time: on a shared 2-core machine, wall time counts others' work


def per_call_us(f, reps):
    t = CLOCK()
    for _ in range(reps):
        f()
    return (CLOCK() - t) / reps / N * 1e6


def measure(torch, plug, model, op, fn, direct, x, rounds, reps):
    plugged_model = copy.deepcopy(model)
    kernel = plug.Kernel("k", op, fn, [str(i) for i in range(N)], torch.float32)
    handle = plug.Plugged(plugged_model, [kernel])
    variants = {"eager": lambda: model(x), "direct": lambda: direct(x), "plugged": lambda: plugged_model(x)}
    with torch.no_grad():
        for f in variants.values():
            f()
        kernel.routed, kernel.fallbacks = 0, {}
        samples = {k: [] for k in variants}
        names = list(variants)
        for r in range(rounds):
            for name in names[r % 3:] + names[:r % 3]:      # a rotating order
                samples[name].append(per_call_us(variants[name], reps))
    calls = rounds * reps * N
    if kernel.routed != calls or kernel.fallbacks:
        raise SystemExit("%s: %d of %d calls routed, fallbacks %s: the plug is not on the path"
                         % (op, kernel.routed, calls, kernel.fallbacks))
    handle.restore()
    row = {k: statistics.median(v) for k, v in samples.items()}
    row["plug_own_us"] = statistics.median(p - d for p, d in zip(samples["plugged"], samples["direct"]))
    row["plug_own_us_spread"] = [min(p - d for p, d in zip(samples["plugged"], samples["direct"])),
                                 max(p - d for p, d in zip(samples["plugged"], samples["direct"]))]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=40, help="forwards of the N-module stack per sample")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--plug-path", default=os.path.join(ROOT, "agent", "python"))
    ap.add_argument("--cases", default="linear,layernorm,rmsnorm,softmax")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: this thread's CPU time (default; robust to other load), wall: perf_counter")
    a = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time if a.clock == "cpu" else time.perf_counter
    if a.rounds < 3 or a.reps < 1:
        raise SystemExit("--rounds must be at least 3 and --reps at least 1")
    sys.path.insert(0, os.path.abspath(a.plug_path))
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from modelplug import plug
    torch.set_num_threads(1)
    torch.manual_seed(0)
    all_cases = cases(torch, nn, F)
    unknown = [c for c in a.cases.split(",") if c not in all_cases]
    if unknown:
        raise SystemExit("--cases: unknown %s (known: %s)" % (", ".join(unknown), ", ".join(all_cases)))
    x = torch.randn(2, 8)
    rows = {}
    for name in a.cases.split(","):
        model, op, fn, direct = all_cases[name]
        rows[name] = measure(torch, plug, model.eval(), op, fn, direct, x, a.rounds, a.reps)
    if a.json:
        print(json.dumps({"unit": "us per module call (%s time)" % a.clock, "plug": os.path.abspath(plug.__file__),
                          "cases": rows},
                         indent=1))
        return
    print("per module call, us (median of %d rounds; %s time; CPU, fp32, one thread, %s)"
          % (a.rounds, a.clock, plug.__file__))
    print("| case | eager | starter direct | plugged | plug's own cost (min..max over rounds) |")
    print("|---|---|---|---|---|")
    for name, r in rows.items():
        print("| %s | %.2f | %.2f | %.2f | %.2f (%.2f..%.2f) |" % (name, r["eager"], r["direct"], r["plugged"],
                                                              r["plug_own_us"], *r["plug_own_us_spread"]))


if __name__ == "__main__":
    main()
