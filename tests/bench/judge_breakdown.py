"""Where an isolated bench's seconds go on a CUDA machine (issue #11's cost of isolation).

  python3 tests/bench/judge_breakdown.py OUTDIR [REPEATS] [OTHER_PYDIR]

Part A: a fresh interpreter's start-up, step by step (import torch, CUDA context, import triton, the
first launch of a small Triton kernel) with an empty Triton cache, with only Triton's driver
utilities cached, and with everything cached. Part B: harness.bench.run on Triton starters, full
and quick, REPEATS times each in one judge process (as the loop's worker does), with the seconds of
every stage; with OTHER_PYDIR (an `agent/python` of another commit, `git archive REV agent/python`),
the same benches through it, interleaved judge by judge. Prints markdown; writes breakdown.json.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(ROOT, "agent", "python")
STARTERS = os.path.join(PYDIR, "harness", "starters", "triton")

STARTUP = r'''
import json, time
t = [time.perf_counter()]
import torch
t.append(time.perf_counter())
torch.empty(1, device="cuda"); torch.cuda.synchronize()
t.append(time.perf_counter())
import triton, triton.language as tl
t.append(time.perf_counter())
@triton.jit
def add(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(y + i, tl.load(x + i, mask=m) + 1, mask=m)
x = torch.zeros(4096, device="cuda"); y = torch.empty_like(x)
add[(4,)](x, y, 4096, BLOCK=1024); torch.cuda.synchronize()
t.append(time.perf_counter())
add[(4,)](x, y, 4096, BLOCK=512); torch.cuda.synchronize()      # same signature, new constexpr
t.append(time.perf_counter())
print(json.dumps({"import_torch": t[1]-t[0], "cuda_context": t[2]-t[1], "import_triton": t[3]-t[2],
                  "first_launch": t[4]-t[3], "second_config": t[5]-t[4]}))
'''


def startup(cache):
    env = dict(os.environ, TRITON_CACHE_DIR=cache)
    script = os.path.join(os.path.dirname(cache), "startup.py")     # Triton's jit reads the source
    with open(script, "w") as f:
        f.write(STARTUP)
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return {"error": out.stderr[-500:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def part_a(rows):
    tmp = tempfile.mkdtemp(prefix="tb-")
    res = {"cold": [], "driver_only": [], "warm": []}
    for i in range(3):
        c = os.path.join(tmp, "c%d" % i)
        res["cold"].append(startup(c))
    if not os.path.isdir(os.path.join(tmp, "c0")):
        print("cold start-up failed: %s" % res["cold"][0])
        return
    entries = {d: os.listdir(os.path.join(tmp, "c0", d)) for d in os.listdir(os.path.join(tmp, "c0"))}
    for i in range(3):
        d = os.path.join(tmp, "d%d" % i)
        os.makedirs(d)
        for e, files in entries.items():
            if any(f.startswith("cuda_utils") for f in files):
                shutil.copytree(os.path.join(tmp, "c0", e), os.path.join(d, e))
        res["driver_only"].append(startup(d))
    for i in range(3):
        res["warm"].append(startup(os.path.join(tmp, "c0")))
    rows["startup"] = res
    rows["cache_entries"] = entries
    print("\n### A fresh interpreter on this machine (medians of 3, seconds)\n")
    keys = ["import_torch", "cuda_context", "import_triton", "first_launch", "second_config"]
    print("| Triton cache | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for label, runs in res.items():
        ok = [r for r in runs if "error" not in r]
        if not ok:
            print("| %s | %s |" % (label, runs[0].get("error", "")[:200]))
            continue
        print("| %s | %s |" % (label, " | ".join("%.3f" % statistics.median(r[k] for r in ok) for k in keys)))
    shutil.rmtree(tmp, ignore_errors=True)


CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from harness import bench
for spec in json.loads(sys.argv[2]):
    t = time.time()
    r = bench.run(dict(spec, device="cuda"))
    print("RESULT " + json.dumps({"path": spec["kernel_path"], "quick": spec.get("quick", False),
          "status": r.get("status"), "failure": (r.get("failure") or "")[:300], "bench_seconds": r.get("bench_seconds"),
          "wall": time.time() - t, "stages": [(s["name"], s["seconds"]) for s in r.get("stages", [])],
          "latency_us": r.get("latency_us"), "noise_pct": r.get("noise_pct"),
          "reps": (r.get("timing") or {}).get("reps"), "calls_per_round": (r.get("timing") or {}).get("calls_per_round")}),
          flush=True)
'''


def part_b(rows, repeats, pydir=PYDIR, label=""):
    specs = []
    for name in ("rmsnorm", "softmax", "matmul"):
        for quick in (False, True):
            specs += [{"kernel_path": os.path.join(STARTERS, name + ".py"), "quick": quick}] * repeats
    p = subprocess.run([sys.executable, "-c", CHILD, pydir, json.dumps(specs)], capture_output=True, text=True,
                       timeout=420)
    res = [json.loads(l[7:]) for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    if not res:
        print(p.stderr[-2000:])
    rows["benches" + label] = res
    print("\n### harness.bench.run, one judge process%s (seconds per stage; first bench of each kind first)\n"
          % (" " + label if label else ""))
    print("| starter | mode | status | bench s | stages |")
    print("|---|---|---|---|---|")
    for r in res:
        print("| %s | %s | %s | %.2f | %s |" % (os.path.basename(r["path"]), "quick" if r["quick"] else "full",
                                             r["status"], r["bench_seconds"] or 0,
                                             ", ".join("%s %.2f" % (n, s) for n, s in r["stages"])))


def main():
    out = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    os.makedirs(out, exist_ok=True)
    rows = {"env": {k: os.environ.get(k, "") for k in ("AUTOKERNEL_BWRAP", "AK_TRITON_SEED")}}
    part_a(rows)
    part_b(rows, repeats)
    if len(sys.argv) > 3:
        part_b(rows, repeats, os.path.abspath(sys.argv[3]), "(other: %s)" % sys.argv[3])
    with open(os.path.join(out, "breakdown.json"), "w") as f:
        json.dump(rows, f, indent=1, default=str)


if __name__ == "__main__":
    main()
