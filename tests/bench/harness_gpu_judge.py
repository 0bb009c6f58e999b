"""The isolated judge on a CUDA machine: Triton starters (quick and full), the attack kernels, and
the same starters through the in-process judge of commit 803822b for the cost of isolation.

  python3 tests/bench/harness_gpu_judge.py OLD_PYDIR OUTDIR     (OLD_PYDIR: see attacks_vs_judge.py)
  python3 tests/bench/harness_gpu_judge.py - OUTDIR             (the isolated judge only)

Prints a markdown table per part; writes judge.json under OUTDIR. Stops before ~480 s.
"""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NEW = os.path.join(ROOT, "agent", "python")
STARTERS = os.path.join(NEW, "harness", "starters", "triton")
CHEATERS = os.path.join(ROOT, "tests", "agent", "harness", "cheaters")
PEAKS = {"name": "NVIDIA H200", "tflops": {"fp32": 67, "tf32": 494, "fp16": 989, "bf16": 989, "fp8": 1979},
         "bandwidth_gbs": 4800, "l2_mib": 60}
T0 = time.time()

CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from harness import bench
out = []
for spec in json.loads(sys.argv[2]):
    t = time.time()
    r = bench.run(dict(spec, device="cuda", peaks=%s))
    keep = {k: r.get(k) for k in ("status", "failure", "latency_us", "ref_latency_us", "speedup", "noise_pct",
                                  "gbps", "tflops", "bench_seconds", "isolation", "flags")}
    keep["timing"] = {k: v for k, v in (r.get("timing") or {}).items() if k not in ("round_latencies_us", "round_ref_latencies_us")}
    keep["stages"] = [(s["name"], round(s["seconds"], 3)) for s in r.get("stages", [])]
    keep["wall"] = time.time() - t
    keep["path"] = spec["kernel_path"]
    out.append(keep)
    print("RESULT " + json.dumps(keep, default=str), flush=True)
''' % json.dumps(PEAKS)


def bench(pydir, specs, budget):
    left = float(os.environ.get("JUDGE_BUDGET_S", 480)) - (time.time() - T0)
    if left < 20:
        return []
    p = subprocess.Popen([sys.executable, "-c", CHILD, pydir, json.dumps(specs)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out, deadline = [], time.time() + min(budget, left)
    for line in p.stdout:
        if line.startswith("RESULT "):
            out.append(json.loads(line[7:]))
        elif "Error" in line or "error" in line:
            sys.stderr.write(line)
        if time.time() > deadline:
            p.kill()
            break
    p.wait()
    return out


def table(title, rows):
    print("\n### %s\n" % title)
    print("| kernel | status | latency us | ref us | speedup | noise % | bench s | wall s | failure |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f = lambda k, fmt="%.3g": (fmt % r[k]) if isinstance(r.get(k), (int, float)) else "-"  # noqa: E731
        print("| %s | %s | %s | %s | %s | %s | %s | %.1f | %s |" % (
            os.path.basename(r["path"]), r["status"], f("latency_us"), f("ref_latency_us"), f("speedup"),
            f("noise_pct", "%.2f"), f("bench_seconds", "%.1f"), r["wall"], (r.get("failure") or "")[:90].replace("|", "/")))
    sys.stdout.flush()


def main():
    old, outdir = sys.argv[1], sys.argv[2]
    ops = ["softmax", "rmsnorm", "layernorm", "matmul", "cross_entropy", "flash_attention", "fused_mlp",
           "rotary_embedding", "reduce", "gelu", "silu"]
    quick = [{"kernel_path": os.path.join(STARTERS, o + ".py"), "quick": True, "seed": 1} for o in ops]
    full = [{"kernel_path": os.path.join(STARTERS, o + ".py"), "quick": False, "seed": 2}
            for o in ("softmax", "matmul", "rmsnorm")]
    results = {}
    attacks = sorted(f for f in os.listdir(CHEATERS) if f.endswith(".py") and f not in (
        "memory_hog.py", "loosened_tolerance.py", "impossible_throughput.py"))
    if os.environ.get("ATTACKS"):                       # a subset, e.g. ATTACKS=ctypes_timer,after_n_calls
        attacks = [a + ".py" for a in os.environ["ATTACKS"].split(",")]
    results["attacks"] = bench(NEW, [{"kernel_path": os.path.join(CHEATERS, a), "quick": True} for a in attacks], 200)
    table("attacks on CUDA, isolated judge", results["attacks"])
    if os.environ.get("AK_ATTACKS_ONLY"):
        with open(os.path.join(outdir, "judge.json"), "w") as f:
            json.dump(results, f, indent=1, default=str)
        return
    results["new_quick"] = bench(NEW, quick[:6] + quick[:3], 90)
    table("isolated judge, quick (the first three repeated: warm sandboxes)", results["new_quick"])
    if old != "-":
        results["old_quick"] = bench(old, quick[:6] + quick[:3], 60)
        table("in-process judge (803822b), quick", results["old_quick"])
    results["new_full"] = bench(NEW, full, 80)
    table("isolated judge, full", results["new_full"])
    if old != "-":
        results["old_full"] = bench(old, full, 60)
        table("in-process judge (803822b), full", results["old_full"])
    with open(os.path.join(outdir, "judge.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
