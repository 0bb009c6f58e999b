#!/usr/bin/env python3
"""Host cost of a plugged call on CUDA (#38, #40): ViT-B/16-sized calls (d 768, 64 x 197 tokens, 12 heads,
bf16) with the Triton starters, each call three ways: eager PyTorch, the starter's kernel_fn called
directly (inputs already in its layout), and the same module with the starter plugged by modelplug.

Cases: linear_gelu (nn.Linear 768 -> 3072 + nn.GELU, the GELU in the matmul's epilogue: the Linear's
swapped forward), linear (768 -> 2304 with bias), layernorm (nn.LayerNorm(768, eps 1e-6): swapped
forward), attention (F.scaled_dot_product_attention inside a module: the function-level route).
Per call: `host_us`, the time Python takes to issue it (no synchronisation: what the CPU spends while
the GPU may still run), and `wall_us`, synchronised (calls issued back to back, then
torch.cuda.synchronize()). Medians over rounds that alternate the variants. plugged - direct (host) is
what the plug itself costs a call on this host; the run fails if a plugged call was not routed.

    python3 tests/bench/plug_host_gpu.py                  # CUDA: bf16, Triton starters (< 2 min)
    python3 tests/bench/plug_host_gpu.py --json           # the same as JSON
    python3 tests/bench/plug_host_gpu.py --tokens 197     # batch 1: where host time decides
    /usr/bin/python3 tests/bench/plug_host_gpu.py --device cpu   # the CPU check (fp32, CPU starters, small)

Needs torch (2.x on CUDA) and Triton for --device cuda; nothing else of the project but modelplug.
"""

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from modelplug import plug  # noqa: E402


def _sdpa_stand_in(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """F.scaled_dot_product_attention for a torch without it (the CI's CPU 1.13): the plug routes by name."""
    from torch.overrides import handle_torch_function, has_torch_function
    if has_torch_function((query, key, value)):
        return handle_torch_function(_sdpa_stand_in, (query, key, value), query, key, value, attn_mask=attn_mask,
                                     dropout_p=dropout_p, is_causal=is_causal, scale=scale)
    s = query @ key.transpose(-2, -1) * (scale or 1.0 / math.sqrt(query.shape[-1]))
    return torch.softmax(s, dim=-1) @ value


_sdpa_stand_in.__name__ = "scaled_dot_product_attention"


def starter(op, device, contract):
    """The starter module for `op` with CONTRACT set before it runs (as extract writes it)."""
    kind = "triton" if device == "cuda" else "cpu"
    path = os.path.join(ROOT, "agent", "python", "harness", "starters", kind, op + ".py")
    name = "plug_host_%s_%s_%d" % (kind, op, len(sys.modules))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    mod.CONTRACT = dict(contract)
    sys.modules[name] = mod                 # Triton's @jit wants its module importable
    spec.loader.exec_module(mod)
    return mod


class Mlp(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1, self.act = nn.Linear(d, hidden), nn.GELU()

    def forward(self, x):
        return self.act(self.fc1(x))


class Attention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def cases(device, dtype, batch, seq, d, heads):
    """name -> (module, site, op type, contract, inputs, direct(fn) -> a call of kernel_fn on ready inputs)."""
    g = torch.Generator(device="cpu").manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=g).to(device=device, dtype=dtype)
    x = rand(batch, seq, d)
    x2 = x.reshape(-1, d)
    out = {}
    mlp = Mlp(d, 4 * d).to(device=device, dtype=dtype).eval()
    wt1 = mlp.fc1.weight.t().contiguous()
    out["linear_gelu"] = (mlp, "fc1", "matmul", {"bias": True, "activation": "gelu"}, (x,),
                          lambda fn: (lambda: fn(x2, wt1, mlp.fc1.bias)))
    lin = nn.Linear(d, 3 * d).to(device=device, dtype=dtype).eval()
    wt = lin.weight.t().contiguous()
    out["linear"] = (lin, "", "matmul", {"bias": True, "activation": "none"}, (x,),
                     lambda fn: (lambda: fn(x2, wt, lin.bias)))
    ln = nn.LayerNorm(d, eps=1e-6).to(device=device, dtype=dtype).eval()
    out["layernorm"] = (ln, "", "layernorm", {"eps": 1e-6, "bias": True}, (x,),
                        lambda fn: (lambda: fn(x2, ln.weight, ln.bias)))
    q, k, v = (rand(batch, heads, seq, d // heads) for _ in range(3))
    out["attention"] = (Attention(), "", "flash_attention", {"causal": False, "scale": None, "kv_heads": None},
                        (q, k, v), lambda fn: (lambda: fn(q, k, v)))
    return out


def sample(f, calls, sync):
    """(host us, wall us) per call for `calls` calls of f issued back to back."""
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
    t1 = time.perf_counter()
    sync()
    t2 = time.perf_counter()
    return (t1 - t0) / calls * 1e6, (t2 - t0) / calls * 1e6


def measure(name, case, device, dtype, rounds, calls, sync):
    module, site, op, contract, inputs, direct = case
    mod = starter(op, device, contract)
    kernel = plug.Kernel(name, op, mod.kernel_fn, [site or "<model>"], dtype, contract=plug.contract_of(mod))
    variants = {"eager": lambda: module(*inputs), "direct": direct(mod.kernel_fn)}
    with torch.no_grad():
        want = module(*inputs)
        handle = plug.Plugged(module, [kernel])
        try:
            got = module(*inputs)          # the first call also compiles (and tunes) the Triton kernel
            variants["direct"]()
            err = float((got.float() - want.float()).abs().max())
            kernel.routed, kernel.fallbacks = 0, {}
            variants["plugged"] = lambda: module(*inputs)
            samples = {v: [] for v in ("eager", "direct", "plugged")}
            names = list(samples)
            for r in range(rounds):
                for v in names[r % 3:] + names[:r % 3]:
                    if v == "eager":
                        handle.restore()
                        samples[v].append(sample(variants[v], calls, sync))
                        handle = plug.Plugged(module, [kernel])
                    else:
                        samples[v].append(sample(variants[v], calls, sync))
        finally:
            handle.restore()
    routed, fallbacks = kernel.routed, dict(kernel.fallbacks)
    if routed != rounds * calls or fallbacks:
        raise SystemExit("%s: %d of %d plugged calls routed, fallbacks %s: the plug is not on the path"
                         % (name, routed, rounds * calls, fallbacks))
    row = {"shape": [list(t.shape) for t in inputs], "max_abs_err_vs_eager": err, "routed": routed}
    for v, s in samples.items():
        row[v] = {"host_us": statistics.median(h for h, _ in s), "wall_us": statistics.median(w for _, w in s)}
    row["plug_own_host_us"] = statistics.median(p[0] - d[0] for p, d in zip(samples["plugged"], samples["direct"]))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cuda", "cpu"))
    ap.add_argument("--tokens", type=int, default=None, help="batch x 197 (default 64 x 197 on CUDA, 2 x 17 on CPU)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=20, help="calls per sample, issued back to back")
    ap.add_argument("--cases", default="linear_gelu,linear,layernorm,attention")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t_start = time.perf_counter()
    if a.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: this torch sees no CUDA device (use --device cpu for the CPU check)")
    if a.rounds < 3 or a.calls < 1:
        raise SystemExit("--rounds must be at least 3 and --calls at least 1")
    if not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = _sdpa_stand_in
    cuda = a.device == "cuda"
    dtype = torch.bfloat16 if cuda else torch.float32
    seq, d, heads = (197, 768, 12) if cuda else (17, 64, 4)
    tokens = a.tokens or (64 * 197 if cuda else 2 * 17)
    if tokens % seq:
        raise SystemExit("--tokens %d is not a multiple of the sequence length %d" % (tokens, seq))
    if not cuda:
        torch.set_num_threads(1)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    all_cases = cases(a.device, dtype, tokens // seq, seq, d, heads)
    unknown = [c for c in a.cases.split(",") if c not in all_cases]
    if unknown:
        raise SystemExit("--cases: unknown %s (known: %s)" % (", ".join(unknown), ", ".join(all_cases)))
    rows = {c: measure(c, all_cases[c], a.device, dtype, a.rounds, a.calls, sync) for c in a.cases.split(",")}
    device_name = torch.cuda.get_device_name() if cuda else "cpu"
    report = {"device": device_name, "dtype": str(dtype)[6:], "torch": torch.__version__, "tokens": tokens, "d": d,
              "rounds": a.rounds, "calls_per_sample": a.calls, "seconds": round(time.perf_counter() - t_start, 1),
              "cases": rows}
    if a.json:
        print(json.dumps(report, indent=1))
        return
    print("per call, us: host = issuing it, wall = synchronised; median of %d rounds x %d calls (%s, %s, torch %s, "
          "%d tokens, d %d; %.0f s)" % (a.rounds, a.calls, device_name, report["dtype"], torch.__version__, tokens,
                                        d, report["seconds"]))
    print("| case | eager host / wall | direct host / wall | plugged host / wall | plug's own host cost | max err vs eager |")
    print("|---|---|---|---|---|---|")
    for c, r in rows.items():
        print("| %s | %s | %s | %s | %.1f | %.3g |" % (
            c, *("%.1f / %.1f" % (r[v]["host_us"], r[v]["wall_us"]) for v in ("eager", "direct", "plugged")),
            r["plug_own_host_us"], r["max_abs_err_vs_eager"]))


if __name__ == "__main__":
    main()
