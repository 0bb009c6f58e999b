#!/usr/bin/env python3
"""GPU benchmark of the harness and its Triton starters (run on a CUDA machine, not in ctest).

1. `harness`: every Triton starter through the full bench (all stages, all dtypes) and --quick;
   status, seconds per experiment, latency, % of roof.
2. `compare`: at each op's headline size (bf16): starter vs PyTorch eager vs
   torch.compile(mode="max-autotune-no-cudagraphs"), do_bench medians with L2 flush, one table.
3. `cheaters`: the CPU regression cheaters run on CUDA tensors; each must be caught.

    python3 tests/bench/harness_gpu_bench.py [--parts harness,compare,cheaters] [--ops softmax,...] [--starters DIR]

Prints markdown tables; writes harness_gpu_bench.json to $OUT (or --json PATH) when set.
"""

import argparse
import json
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))

import torch  # noqa: E402

from harness import bench, ops  # noqa: E402
from harness.contract.dtypes import element_size  # noqa: E402
from harness.checks.plan import Case  # noqa: E402

STARTERS = os.path.join(ROOT, "agent", "python", "harness", "starters", "triton")
CHEATERS = os.path.join(ROOT, "tests", "agent", "harness", "cheaters")
# NVIDIA H200 SXM datasheet (dense): the roofs the % of peak is measured against.
H200_PEAKS = {"tflops": {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
              "bandwidth_gbs": 4800.0}


def fmt(v, spec="%.3g"):
    return "-" if v is None or v != v else spec % v


def part_harness(names, rows):
    print("\n## Harness on the Triton starters (H200)\n")
    print("| op | mode | status | bench s | latency us | ref us | speedup | TFLOP/s | GB/s | bound | % roof | noise % | failure |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for quick in (False, True):
            t0 = time.perf_counter()
            try:
                r = bench.run({"kernel_path": os.path.join(STARTERS, name + ".py"), "device": "cuda",
                               "quick": quick, "peaks": H200_PEAKS})
            except Exception as e:  # noqa: BLE001
                r = {"status": "crash", "failure": "%s: %s" % (type(e).__name__, e), "stages": [],
                     "traceback": traceback.format_exc()}
            wall = time.perf_counter() - t0
            r["wall_s"] = wall
            rows.append({"part": "harness", "op": name, "quick": quick, "result": r})
            print("| %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                name, "quick" if quick else "full", r["status"], wall, fmt(r.get("latency_us"), "%.1f"),
                fmt(r.get("ref_latency_us"), "%.1f"), fmt(r.get("speedup"), "%.2f"), fmt(r.get("tflops")),
                fmt(r.get("gbps"), "%.0f"), r.get("bound", ""), fmt(r.get("pct_peak"), "%.1f"),
                fmt(r.get("noise_pct"), "%.2f"), (r.get("failure") or "")[:300].replace("|", "/")))
            sys.stdout.flush()


def _load(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("starter_%d" % abs(hash(path)), path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def part_compare(names, rows, dtype="bfloat16"):
    import triton.testing
    print("\n## Starters vs eager vs torch.compile(max-autotune-no-cudagraphs), headline sizes, %s\n" % dtype)
    print("| op | size | eager us | compile us | compile s | starter us | starter GB/s | starter TFLOP/s | starter vs eager | starter vs compile |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        spec = ops.OPS[name]
        size = spec.headline["cuda"]
        case = Case("compare", spec, size, dtype, "normal", 1234).materialize("cuda")
        x = case.inputs
        row = {"part": "compare", "op": name, "size": size, "dtype": dtype}
        try:
            starter = _load(os.path.join(STARTERS, name + ".py")).kernel_fn
            bench_ = lambda fn: triton.testing.do_bench(lambda: fn(*x), warmup=25, rep=100, return_mode="median") * 1e3  # noqa: E731,F821 - x is bound above; pyflakes reads the closing `del`
            row["eager_us"] = bench_(spec.reference)
            row["starter_us"] = bench_(starter)
            torch._dynamo.reset()
            compiled = torch.compile(spec.reference, mode="max-autotune-no-cudagraphs", dynamic=False)
            t0 = time.perf_counter()
            compiled(*x)
            torch.cuda.synchronize()
            row["compile_s"] = time.perf_counter() - t0
            row["compile_us"] = bench_(compiled)
        except Exception as e:  # noqa: BLE001
            row["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        s = row.get("starter_us")
        gb = spec.bytes(size, element_size(dtype)) / (s * 1e-6) / 1e9 if s else None
        tf = spec.flops(size) / (s * 1e-6) / 1e12 if s else None
        row.update(starter_gbps=gb, starter_tflops=tf)
        rows.append(row)
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s" % (
            name, spec.size_label(size), fmt(row.get("eager_us"), "%.1f"), fmt(row.get("compile_us"), "%.1f"),
            fmt(row.get("compile_s"), "%.0f"), fmt(s, "%.1f"), fmt(gb, "%.0f"), fmt(tf, "%.1f"),
            fmt(row["eager_us"] / s if s and row.get("eager_us") else None, "%.2fx"),
            fmt(row["compile_us"] / s if s and row.get("compile_us") else None, "%.2fx"),
            (" " + row["error"]) if "error" in row else ""))
        sys.stdout.flush()
        del case, x


def part_cheaters(rows):
    print("\n## Cheaters on CUDA tensors (each must be caught)\n")
    print("| cheater | status | failure |")
    print("|---|---|---|")
    for fname in sorted(os.listdir(CHEATERS)):
        if not fname.endswith(".py") or fname.startswith("_"):
            continue
        args = {"kernel_path": os.path.join(CHEATERS, fname), "device": "cuda", "quick": True,
                "dtype": "float32", "peaks": H200_PEAKS}
        if fname.startswith("impossible"):
            args["peaks"] = {"tflops": {"fp32": 1e-6}, "bandwidth_gbs": 1e-3}
        try:
            r = bench.run(args)
        except Exception as e:  # noqa: BLE001
            r = {"status": "crash", "failure": "%s: %s" % (type(e).__name__, e)}
        rows.append({"part": "cheaters", "cheater": fname, "result": r})
        print("| %s | %s | %s |" % (fname, r["status"], (r.get("failure") or "")[:200].replace("|", "/")))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="harness,compare,cheaters")
    ap.add_argument("--ops", default=",".join(ops.OPS))
    ap.add_argument("--json", default=None)
    ap.add_argument("--starters", default=None, help="folder of Triton starters (candidates before promotion)")
    a = ap.parse_args()
    global STARTERS
    STARTERS = os.path.abspath(a.starters or STARTERS)
    names = [n for n in a.ops.split(",") if n]
    props = torch.cuda.get_device_properties(0)
    env = {"gpu": props.name, "torch": torch.__version__, "python": sys.version.split()[0]}
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = None
    print("# harness_gpu_bench: %s" % json.dumps(env))
    rows = []
    parts = a.parts.split(",")
    if "harness" in parts:
        part_harness(names, rows)
    if "cheaters" in parts:
        part_cheaters(rows)
    if "compare" in parts:
        part_compare(names, rows)
    out = a.json or (os.path.join(os.environ["OUT"], "harness_gpu_bench.json") if os.environ.get("OUT") else None)
    if out:
        with open(out, "w") as f:
            json.dump({"env": env, "rows": rows}, f, indent=1, default=str)
        print("\nwrote %s" % out)


if __name__ == "__main__":
    main()
