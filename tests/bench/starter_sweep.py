#!/usr/bin/env python3
"""Triton starters against what PyTorch offers, configuration by configuration (CUDA machine only).

For each op at the issue #15 target shapes (bf16) that has a candidate starter (tests/bench/starter_candidates/;
--starters names another folder, e.g. the shipped starters against --old, a copy of earlier ones) with its own constants, then
with each configuration of a short list (module constants overridden, as the tune agent does), and the
shipped starter (agent/python/harness/starters/triton/, or --old DIR) for a side-by-side; PyTorch's own (cuBLAS, SDPA, eager) and
torch.compile as the yardsticks. Each candidate's output is compared with the reference first (a
wrong kernel gets no time); times are triton.testing.do_bench medians (it clears a 256 MB buffer
before each repetition, so every call reads cold data).

    python3 tests/bench/starter_sweep.py [--ops matmul,...] [--starters DIR] [--old DIR] [--no-compile]

Markdown to stdout; starter_sweep.json to $OUT when set.
"""

import argparse
import importlib.util
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = os.path.join(ROOT, "agent", "python", "harness", "starters", "triton")
CANDIDATES = os.path.join(ROOT, "tests", "bench", "starter_candidates", "triton")
BF = torch.bfloat16

# The llama example's linear layers on a GPU (resources/examples/llama.py: 4 x 2048 tokens, d 2048,
# 4 KV heads of 128, SwiGLU 5632, vocab 32000) and the 4096^3 of the issue: (M, N, K).
MATMUL_SHAPES = [(4096, 4096, 4096), (8192, 2048, 2048), (8192, 512, 2048), (8192, 5632, 2048),
                 (8192, 2048, 5632), (8192, 32000, 2048)]

MATMUL_CONFIGS = [
    dict(TMA=0, PERSISTENT=0, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=3),
    dict(TMA=1, PERSISTENT=0, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=3),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=3),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=4),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=4),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, NUM_WARPS=4, NUM_STAGES=4),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=3, WARP_SPECIALIZE=1),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, NUM_WARPS=4, NUM_STAGES=4, WARP_SPECIALIZE=1),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=3, GROUP_M=16),
    dict(TMA=1, PERSISTENT=0, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=4),
    dict(TMA=1, PERSISTENT=1, BLOCK_M=256, BLOCK_N=128, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=3),
]
# Session 19's candidate adds a TMA path (TMA=1, 2-byte inputs on Hopper); TMA=0 is the shipped kernel.
ATTN_CONFIGS = [dict(TMA=t, BLOCK_M=m, BLOCK_N=n, NUM_WARPS=w, NUM_STAGES=s) for t, m, n, w, s in
                [(1, 128, 64, 8, 3), (1, 128, 64, 8, 2), (1, 128, 64, 8, 4), (1, 128, 128, 8, 2),
                 (1, 128, 128, 8, 3), (1, 64, 64, 4, 3), (1, 128, 32, 8, 4), (1, 128, 64, 4, 3),
                 (0, 64, 64, 4, 3), (0, 128, 64, 8, 3)]]
ROW_CONFIGS = [dict(NUM_WARPS=w) for w in (4, 8, 16, 32)]
# Session 19's rmsnorm candidate: the row held in registers (MAX_FUSED_COLS above the width) at
# NUM_WARPS, or Inductor's looped two passes (MAX_FUSED_COLS below it) at CHUNK / CHUNK_WARPS; at the
# issue's 8192^2, the llama example's 2048 columns, and either side.
RMS_SHAPES = [(8192, 8192), (16384, 2048), (8192, 4096), (4096, 16384)]
RMS_CONFIGS = ([dict(MAX_FUSED_COLS=32768, NUM_WARPS=w) for w in (4, 8, 16)]
               + [dict(MAX_FUSED_COLS=1024, CHUNK=c, CHUNK_WARPS=w) for c in (2048, 4096) for w in (8, 16)])
LN_CONFIGS = [dict(NUM_WARPS=w) for w in (4, 8, 16)] + [dict(MAX_FUSED_COLS=1024, CHUNK=c, NUM_WARPS=w)
                                                      for c in (2048, 4096) for w in (8, 16)]
CE_CONFIGS = [dict(CHUNK=c, NUM_WARPS=w) for c in (2048, 4096, 8192) for w in (4, 8, 16)]
MLP_CONFIGS = [dict(TMA=t, PERSISTENT=p, BLOCK_M=128, BLOCK_N=n, BLOCK_K=64, NUM_WARPS=8, NUM_STAGES=s)
               for t, p, n, s in [(0, 0, 128, 3), (1, 0, 128, 3), (1, 1, 128, 3), (1, 1, 128, 4), (1, 1, 256, 3)]]


def load(path, overrides):
    spec = importlib.util.spec_from_file_location("starter_%d" % time.monotonic_ns(), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for k, v in overrides.items():
        setattr(mod, k, v)
    return mod


def rmsnorm_ref(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)


def cases():
    """(op, label, make_inputs, reference, flops, bytes, configs)"""
    out = []
    for M, N, K in MATMUL_SHAPES:
        out.append(("matmul", "%dx%dx%d" % (M, N, K),
                    lambda M=M, N=N, K=K: (torch.randn(M, K, device="cuda", dtype=BF),
                                           torch.randn(K, N, device="cuda", dtype=BF) * K ** -0.5),
                    torch.matmul, 2.0 * M * N * K, None, MATMUL_CONFIGS))
    for b, h, s, d in [(4, 16, 2048, 128), (2, 32, 1024, 64)]:
        out.append(("flash_attention", "%dx%dx%dx%d" % (b, h, s, d),
                    lambda b=b, h=h, s=s, d=d: tuple(torch.randn(b, h, s, d, device="cuda", dtype=BF) for _ in range(3)),
                    lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    2.0 * b * h * s * s * d, None, ATTN_CONFIGS))
    n = 8192
    out.append(("softmax", "8192x8192", lambda: (torch.randn(n, n, device="cuda", dtype=BF) * 3,),
                lambda x: torch.softmax(x, dim=-1), None, 2.0 * n * n * 2, ROW_CONFIGS))
    for r, c in RMS_SHAPES:
        out.append(("rmsnorm", "%dx%d" % (r, c), lambda r=r, c=c: (torch.randn(r, c, device="cuda", dtype=BF),
                                                                   torch.rand(c, device="cuda", dtype=BF) + 0.5),
                    rmsnorm_ref, None, 2.0 * r * c * 2, RMS_CONFIGS))
    for r, c in RMS_SHAPES:
        out.append(("layernorm", "%dx%d" % (r, c), lambda r=r, c=c: (torch.randn(r, c, device="cuda", dtype=BF),
                                                                     torch.rand(c, device="cuda", dtype=BF) + 0.5,
                                                                     torch.randn(c, device="cuda", dtype=BF)),
                    lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), None, 2.0 * r * c * 2,
                    LN_CONFIGS))
    v = 128256
    out.append(("cross_entropy", "8192x128256",
                lambda: (torch.randn(n, v, device="cuda", dtype=BF) * 2,
                         torch.randint(0, v, (n,), device="cuda")),
                F.cross_entropy, None, 1.0 * n * v * 2, CE_CONFIGS))
    m, d, hid = 8192, 2048, 5632
    out.append(("fused_mlp", "%dx%dx%d" % (m, d, hid),
                lambda: (torch.randn(m, d, device="cuda", dtype=BF),
                         torch.randn(hid, d, device="cuda", dtype=BF) * d ** -0.5,
                         torch.randn(hid, d, device="cuda", dtype=BF) * d ** -0.5,
                         torch.randn(d, hid, device="cuda", dtype=BF) * hid ** -0.5),
                lambda x, g, u, w: F.linear(F.silu(F.linear(x, g)) * F.linear(x, u), w),
                2.0 * m * d * hid * 3, None, MLP_CONFIGS))
    return out


def rel_err(out, ref):
    out, ref = out.float(), ref.float()
    return ((out - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()


def timed(fn, args):
    from triton.testing import do_bench
    return do_bench(lambda: fn(*args), warmup=25, rep=100, return_mode="median") * 1e3   # us


def rate(us, flops, nbytes):
    return ("%.0f TFLOP/s" % (flops / us / 1e6)) if flops else ("%.0f GB/s" % (nbytes / us / 1e3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="")
    ap.add_argument("--starters", default=CANDIDATES)
    ap.add_argument("--old", default=SHIPPED)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--top", type=int, default=3, help="matmul: configurations carried to the other shapes")
    a = ap.parse_args()
    want = set(filter(None, a.ops.split(",")))
    rows = []
    best_matmul = []
    print("| op | shape | candidate | rel err | us | rate | vs PyTorch | vs compile |")
    print("|---|---|---|---|---|---|---|---|")
    for op, label, make, ref, flops, nbytes, configs in cases():
        if want and op not in want:
            continue
        if not os.path.exists(os.path.join(a.starters, op + ".py")):
            continue  # no candidate for this op (promoted ones leave the candidates folder)
        torch.manual_seed(0)
        args = make()
        expect = ref(*args)
        base_us = timed(ref, args)
        comp_us = None
        if not a.no_compile:
            try:
                comp = torch.compile(ref, mode="max-autotune-no-cudagraphs" if op not in ("matmul", "fused_mlp") else "default")
                comp(*args)
                comp_us = timed(comp, args)
            except Exception as e:  # noqa: BLE001
                print("compile failed for %s: %s" % (op, e), file=sys.stderr)
        pr = lambda name, err, us: print("| %s | %s | %s | %s | %.1f | %s | %s | %s |" % (
            op, label, name, "-" if err is None else "%.1e" % err, us, rate(us, flops, nbytes),
            "%.2f" % (base_us / us), "-" if comp_us is None else "%.2f" % (comp_us / us)))
        pr("pytorch", None, base_us)
        if comp_us:
            pr("torch.compile", None, comp_us)
        rows.append({"op": op, "shape": label, "candidate": "pytorch", "us": base_us})
        if comp_us:
            rows.append({"op": op, "shape": label, "candidate": "compile", "us": comp_us})
        path = os.path.join(a.starters, op + ".py")
        cand = [("starter", path, {})]
        if a.old:
            cand.append(("old starter", os.path.join(a.old, op + ".py"), {}))
        todo = configs
        if op == "matmul" and best_matmul and label != "4096x4096x4096":
            todo = best_matmul
        cand += [(json.dumps(c, separators=(",", ":")), path, c) for c in todo]
        scored = []
        for name, path, over in cand:
            row = {"op": op, "shape": label, "candidate": name}
            try:
                mod = load(path, over)
                out = mod.kernel_fn(*args)
                err = rel_err(out, expect)
                row["rel_err"] = err
                if not (err < 3e-2) or not math.isfinite(err):
                    row["failure"] = "wrong result"
                    print("| %s | %s | %s | %.1e | - | wrong | - | - |" % (op, label, name, err))
                else:
                    us = timed(mod.kernel_fn, args)
                    row["us"] = us
                    pr(name, err, us)
                    if over:
                        scored.append((us, over))
            except Exception as e:  # noqa: BLE001
                row["failure"] = "%s: %s" % (type(e).__name__, str(e)[:300])
                row["traceback"] = traceback.format_exc()[-2000:]
                print("| %s | %s | %s | - | - | %s | - | - |" % (op, label, name, row["failure"][:120].replace("|", "/").replace("\n", " ")))
            rows.append(row)
            sys.stdout.flush()
        if op == "matmul" and label == "4096x4096x4096":
            best_matmul = [c for _, c in sorted(scored, key=lambda t: t[0])[:a.top]]
        del args, expect
        torch.cuda.empty_cache()
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "starter_sweep.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
