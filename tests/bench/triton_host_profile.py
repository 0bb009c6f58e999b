"""Where a Triton starter's host time goes (#40: at ViT sizes our launches are host-bound): each starter's
kernel_fn called at ViT-B/16 sizes (12608 tokens x 768, bf16; attention 64 x 12 x 197 x 64), the host
time per call (issuing it, no synchronisation) and the wall time (synchronised), then a cProfile of 300
calls sorted by own time. Session 24, H100: the matmul with bias + GELU 113.9 us of host per call (its
three TMA descriptors made per call and encoded by Triton's launcher), layernorm 25.5, add + layernorm
32.7, attention 37.7 (docs/runs/h100-s24-hostprof.txt).

    python3 tests/bench/triton_host_profile.py [--top 14]     # on the GPU machine (CUDA, Triton)
"""

import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STARTERS = os.path.join(ROOT, "agent", "python", "harness", "starters", "triton")


def load(op, contract):
    """The Triton starter for `op` with CONTRACT set before it runs, as extract writes it."""
    name = "host_profile_" + op
    spec = importlib.util.spec_from_file_location(name, os.path.join(STARTERS, op + ".py"))
    module = importlib.util.module_from_spec(spec)
    module.CONTRACT = dict(contract)
    sys.modules[name] = module          # Triton's @jit wants its module importable
    spec.loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=14, help="cProfile rows per starter")
    a = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA device and Triton (the GPU machine)")
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(12608, 768, device=dev, dtype=dt)
    r = torch.randn(12608, 768, device=dev, dtype=dt)
    w, b = torch.randn(768, device=dev, dtype=dt), torch.randn(768, device=dev, dtype=dt)
    wt, bias = torch.randn(768, 3072, device=dev, dtype=dt), torch.randn(3072, device=dev, dtype=dt)
    q = torch.randn(64, 12, 197, 64, device=dev, dtype=dt)
    cases = {
        "matmul_bias_gelu": (load("matmul", {"bias": True, "activation": "gelu"}), (x, wt, bias)),
        "layernorm": (load("layernorm", {"eps": 1e-6, "bias": True}), (x, w, b)),
        "add_layernorm": (load("add_layernorm", {"eps": 1e-6, "bias": True}), (x, r, w, b)),
        "attention": (load("flash_attention", {"causal": False, "scale": None, "kv_heads": None}), (q, q, q)),
    }
    print("%s, torch %s" % (torch.cuda.get_device_name(0), torch.__version__))
    for name, (module, args) in cases.items():
        for _ in range(3):
            module.kernel_fn(*args)         # compiles (and tunes) first
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(100):
            module.kernel_fn(*args)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        print("%s: host %.1f us/call, wall %.1f us/call" % (name, (t1 - t0) * 1e4, (t2 - t0) * 1e4))
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(300):
            module.kernel_fn(*args)
        profile.disable()
        torch.cuda.synchronize()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(a.top)
        print(out.getvalue())


if __name__ == "__main__":
    main()
