"""On the GPU machine (issue #15): where do rmsnorm / layernorm lose the last 4 % to torch.compile?

The shipped starters already read each row once and write it once; what is left is how the loads and
stores meet the memory system. This probe (1) saves the Triton code Inductor generates for both ops
($OUT/inductor_<op>.py, to read its launch configuration and cache hints) and (2) times the shipped
one-row-per-program kernel with each hint switched on alone and together: x loaded evict_first,
the weights evict_last, stores streaming (.cs), rsqrt instead of 1/sqrt, and NUM_WARPS 4..32. Every
variant's output is checked against PyTorch first. Times are triton.testing.do_bench medians (L2
flushed), the best of 3 rounds. Usage: python3 tests/bench/norm_probe.py  (writes $OUT/norm_probe.md)
"""

import itertools
import json
import os
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench

BF = torch.bfloat16
OUT = os.environ.get("OUT", "/tmp/out")


@triton.jit
def _norm_row(x_ptr, w_ptr, b_ptr, y_ptr, stride_x, stride_y, n_cols, eps, BLOCK: tl.constexpr,
              LAYER: tl.constexpr, EVICT_X: tl.constexpr, EVICT_W: tl.constexpr,
              STORE_CS: tl.constexpr, RSQRT: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    if EVICT_X:
        x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0, eviction_policy="evict_first")
    else:
        x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0)
    x = x.to(tl.float32)
    if EVICT_W:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    else:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if LAYER:
        mean = tl.sum(x, axis=0) / n_cols
        xc = tl.where(mask, x - mean, 0.0)
        var = tl.sum(xc * xc, axis=0) / n_cols
        if RSQRT:
            rstd = tl.math.rsqrt(var + eps)
        else:
            rstd = 1.0 / tl.sqrt(var + eps)
        if EVICT_W:
            b = tl.load(b_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        else:
            b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = xc * rstd * w + b
    else:
        if RSQRT:
            rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        else:
            rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        y = x * rstd * w
    if STORE_CS:
        tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")
    else:
        tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def run_variant(op, x, w, b, warps, ex, ew, cs, rs):
    rows, cols = x.shape
    y = torch.empty_like(x)
    eps = 1e-6 if op == "rmsnorm" else 1e-5
    _norm_row[(rows,)](x, w, b if b is not None else w, y, x.stride(0), y.stride(0), cols, eps,
                       BLOCK=triton.next_power_of_2(cols), LAYER=op == "layernorm", EVICT_X=ex,
                       EVICT_W=ew, STORE_CS=cs, RSQRT=rs, num_warps=warps)
    return y


def rmsnorm_ref(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)


def best_us(fn):
    return min(do_bench(fn, warmup=25, rep=100, return_mode="median") for _ in range(3)) * 1e3


def main():
    os.makedirs(OUT, exist_ok=True)
    n = 8192
    nbytes = 2.0 * n * n * 2
    rows = []
    lines = ["| op | variant | us | GB/s | vs compile |", "|---|---|---|---|---|"]
    for op in ("rmsnorm", "layernorm"):
        torch.manual_seed(0)
        x = torch.randn(n, n, device="cuda", dtype=BF)
        w = torch.rand(n, device="cuda", dtype=BF) + 0.5
        b = torch.randn(n, device="cuda", dtype=BF) if op == "layernorm" else None
        ref = (lambda: rmsnorm_ref(x, w)) if op == "rmsnorm" else \
            (lambda: F.layer_norm(x, (n,), w, b, 1e-5))
        expect = ref()
        comp_fn = torch.compile(rmsnorm_ref if op == "rmsnorm" else
                                (lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5)),
                                mode="max-autotune-no-cudagraphs")
        cargs = (x, w) if op == "rmsnorm" else (x, w, b)
        try:
            from torch._inductor.utils import run_and_get_code
            _, codes = run_and_get_code(comp_fn, *cargs)
            with open(os.path.join(OUT, "inductor_%s.py" % op), "w") as f:
                f.write("\n\n# ----\n\n".join(codes))
        except Exception as e:  # noqa: BLE001
            print("inductor code for %s not saved: %s" % (op, e), file=sys.stderr)
            comp_fn(*cargs)
        comp_us = best_us(lambda: comp_fn(*cargs))
        lines.append("| %s | torch.compile | %.1f | %.0f | 1.00 |" % (op, comp_us, nbytes / comp_us / 1e3))
        rows.append({"op": op, "variant": "compile", "us": comp_us})
        for warps, ex, ew, cs, rs in itertools.product((4, 8, 16, 32), (0, 1), (0, 1), (0, 1), (0, 1)):
            name = "w%d%s%s%s%s" % (warps, " evict_first(x)" if ex else "", " evict_last(w)" if ew else "",
                                    " store.cs" if cs else "", " rsqrt" if rs else "")
            try:
                out = run_variant(op, x, w, b, warps, ex, ew, cs, rs)
                err = ((out.float() - expect.float()).abs().max() / expect.float().abs().max()).item()
                if not err < 3e-2:
                    lines.append("| %s | %s | wrong (%.1e) | - | - |" % (op, name, err))
                    continue
                us = best_us(lambda: run_variant(op, x, w, b, warps, ex, ew, cs, rs))
            except Exception as e:  # noqa: BLE001
                lines.append("| %s | %s | failed: %s | - | - |" % (op, name, str(e)[:120]))
                continue
            rows.append({"op": op, "variant": name, "us": us})
            lines.append("| %s | %s | %.1f | %.0f | %.3f |" % (op, name, us, nbytes / us / 1e3, comp_us / us))
        with open(os.path.join(OUT, "norm_probe.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(OUT, "norm_probe.json"), "w") as f:
            json.dump(rows, f, indent=1)
    print("\n".join(lines))
    for op in ("rmsnorm", "layernorm"):
        best = sorted((r for r in rows if r["op"] == op and r["variant"] != "compile"), key=lambda r: r["us"])[:5]
        print(op, "best:", [(r["variant"], round(r["us"], 1)) for r in best])


if __name__ == "__main__":
    main()
