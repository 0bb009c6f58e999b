"""The cost of isolation as a tune loop pays it, on a CUDA machine (issue #11's <= 1 s target).

Every bench is a new kernel source, as every experiment of a loop is: each starter is copied with a
comment line inside each function's source, which changes Triton's cache key without changing the
code, so the in-process judge of commit 803822b compiles as much as the isolated one (benching the
same file again, as harness_gpu_judge.py does, lets the in-process judge reuse its compiles and
overstates the difference). Two warm judge processes, one per judge, take the benches alternately,
bench by bench, so both meet the same GPU state.

  mkdir -p /tmp/old && git archive 803822b agent/python | tar -x -C /tmp/old
  python3 tests/bench/judge_tune_like.py /tmp/old/agent/python OUTDIR [VARIANTS]
  TUNE_LIKE_AB=AUTOKERNEL_TIMING_SPIN=0 python3 tests/bench/judge_tune_like.py - OUTDIR 2
  TUNE_LIKE_OLD_LABEL="isolated, HEAD" python3 tests/bench/judge_tune_like.py PREV/agent/python OUTDIR 2
      (OLD "-": no in-process judge; TUNE_LIKE_AB adds the isolated judge with that variable set;
      three judges at once ran the H200 out of memory; TUNE_LIKE_MODES=full for full benches only;
      TUNE_LIKE_OPS=rmsnorm,softmax for some ops only)

Prints a markdown table (median bench seconds per op and mode, the difference, each judge's noise
estimate and the run-to-run spread of the latency it measured); writes tune_like.json. Stops
before ~500 s (JUDGE_BUDGET_S).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NEW = os.path.join(os.path.dirname(os.path.dirname(HERE)), "agent", "python")
STARTERS = os.path.join(NEW, "harness", "starters", "triton")
OPS = tuple(os.environ.get("TUNE_LIKE_OPS", "rmsnorm,softmax,layernorm,matmul,cross_entropy").split(","))
PEAKS = {"name": "NVIDIA H200", "tflops": {"fp32": 67, "tf32": 494, "fp16": 989, "bf16": 989, "fp8": 1979},
         "bandwidth_gbs": 4800, "l2_mib": 60}
T0 = time.time()

CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from harness import bench
for line in sys.stdin:
    spec = json.loads(line)
    t = time.perf_counter()
    r = bench.run(dict(spec, device="cuda", peaks=%s))
    print("RESULT " + json.dumps({"status": r.get("status"), "failure": (r.get("failure") or "")[:200],
          "latency_us": r.get("latency_us"), "noise_pct": r.get("noise_pct"), "wall": time.perf_counter() - t,
          "bench_seconds": r.get("bench_seconds"), "settled_early": (r.get("timing") or {}).get("settled_early"),
          "reps": (r.get("timing") or {}).get("reps"),
          "phases": (r.get("timing") or {}).get("phases_s"),
          "stages": [(s["name"], s["seconds"]) for s in r.get("stages", [])]}), flush=True)
''' % json.dumps(PEAKS)


def variant(op, n, tmp):
    """The starter with '# variant n' inside every function's source (Triton hashes that text)."""
    with open(os.path.join(STARTERS, op + ".py")) as f:
        src = f.read()
    src = re.sub(r"^(def \w+\(.*)$", lambda m: m.group(1) + "\n    # variant %d" % n, src, flags=re.M)
    path = os.path.join(tmp, "%s_v%d.py" % (op, n))
    with open(path, "w") as f:
        f.write(src)
    return path


class Judge:
    def __init__(self, pydir, cache, **extra_env):
        env = dict(os.environ, TRITON_CACHE_DIR=cache, **extra_env)
        self.p = subprocess.Popen([sys.executable, "-u", "-c", CHILD, pydir], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)

    def bench(self, spec):
        self.p.stdin.write(json.dumps(spec) + "\n")
        self.p.stdin.flush()
        for line in self.p.stdout:
            if line.startswith("RESULT "):
                return json.loads(line[7:])
        raise RuntimeError("the judge process ended")

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def main():
    old, outdir = sys.argv[1], sys.argv[2]
    variants = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    budget = float(os.environ.get("JUDGE_BUDGET_S", 500))
    tmp = tempfile.mkdtemp(prefix="tunelike-")
    label = os.environ.get("TUNE_LIKE_OLD_LABEL", "in-process")     # e.g. "isolated, HEAD" for an A/B
    judges = {} if old == "-" else {label: Judge(old, os.path.join(tmp, "cache-old"))}
    judges["isolated"] = Judge(NEW, os.path.join(tmp, "cache-new"))
    if os.environ.get("TUNE_LIKE_AB"):          # e.g. AUTOKERNEL_TIMING_SPIN=0: a third judge, so set
        key, value = os.environ["TUNE_LIKE_AB"].split("=", 1)
        judges["isolated, " + key + "=" + value] = Judge(NEW, os.path.join(tmp, "cache-ab"), **{key: value})
    modes = (False, True) if os.environ.get("TUNE_LIKE_MODES", "full,quick") == "full,quick" else \
        tuple(m == "quick" for m in os.environ["TUNE_LIKE_MODES"].split(","))
    n = 0
    for name, j in judges.items():      # warm-up: sandboxes, torch, the first Triton compile (not counted)
        n += 1
        j.bench({"kernel_path": variant("softmax", n, tmp), "quick": True, "seed": 1})
    rows = []
    for quick in modes:
        for v in range(variants):
            for op in OPS:
                order = list(judges.items())
                turn = (v * len(OPS) + OPS.index(op)) % len(order)
                for name, j in order[turn:] + order[:turn]:     # each judge goes first in turn
                    if time.time() - T0 > budget:
                        break
                    n += 1
                    r = j.bench({"kernel_path": variant(op, n, tmp), "quick": quick, "seed": 10 + v})
                    r.update(judge=name, op=op, quick=quick)
                    rows.append(r)
                    print("%-10s %-5s %-13s %-9s %6.2f s %s" % (name, "quick" if quick else "full", op,
                                                                r["status"], r["wall"], r["failure"][:80]),
                          flush=True)
    for j in judges.values():
        j.close()
    report(rows)
    with open(os.path.join(outdir, "tune_like.json"), "w") as f:
        json.dump(rows, f, indent=1)


def report(rows):
    judges = list(dict.fromkeys(r["judge"] for r in rows))
    print("\n| mode | op | judge | bench s | vs in-process s | noise % | latency spread % | ok |")
    print("|---|---|---|---|---|---|---|---|")
    diffs = {}
    for quick in (False, True):
        for op in OPS:
            base = None
            for name in judges:
                rs = [r for r in rows if r["judge"] == name and r["op"] == op and r["quick"] == quick]
                if not rs:
                    continue
                ok = [r for r in rs if r["status"] == "ok"]
                lat = [r["latency_us"] for r in ok if r["latency_us"]]
                wall = statistics.median(r["wall"] for r in rs)
                noise = statistics.median(r["noise_pct"] for r in ok) if ok else float("nan")
                spread = 100.0 * (max(lat) - min(lat)) / statistics.median(lat) if len(lat) > 1 else float("nan")
                base = wall if base is None else base
                if name != judges[0]:
                    diffs.setdefault((quick, name), []).append(wall - base)
                print("| %s | %s | %s | %.2f | %+.2f | %.2f | %.1f | %d/%d |" % (
                    "quick" if quick else "full", op, name, wall, wall - base, noise, spread, len(ok), len(rs)))
    stage_table(rows, judges)
    phase_table(rows, judges)
    for (quick, name), ds in diffs.items():
        print("%s, %s: median isolation cost per bench %+.2f s over %d ops" % (
            "quick" if quick else "full", name, statistics.median(ds), len(ds)))


def stage_table(rows, judges):
    """Median seconds of each stage, per judge and mode: where the difference goes."""
    print("\n| mode | stage | %s |" % " | ".join(judges))
    print("|---" * (len(judges) + 2) + "|")
    for quick in (False, True):
        names = []
        for r in rows:
            for name, _ in r.get("stages") or []:
                if name not in names:
                    names.append(name)
        for name in names:
            cells = []
            for judge in judges:
                secs = [sum(s for n, s in r.get("stages") or [] if n == name) for r in rows
                        if r["judge"] == judge and r["quick"] == quick and r["status"] == "ok"]
                cells.append("%.2f" % statistics.median(secs) if secs else "-")
            if any(c != "-" for c in cells):
                print("| %s | %s | %s |" % ("quick" if quick else "full", name, " | ".join(cells)))


def phase_table(rows, judges):
    """Median seconds of the timing stage's phases (timing/rounds.py's phases_s) and its rounds, per judge,
    op and mode: what a round costs around its clock."""
    names = ("fill", "flush", "wake", "timed", "stop", "probe", "checks")
    print("\n| mode | op | judge | reps | %s |" % " | ".join(names))
    print("|---" * (len(names) + 4) + "|")
    for quick in (False, True):
        for op in OPS:
            for judge in judges:
                rs = [r for r in rows if r["judge"] == judge and r["op"] == op and r["quick"] == quick
                      and r.get("phases")]
                if not rs:
                    continue
                cells = ["%.3f" % statistics.median(r["phases"].get(n, 0.0) for r in rs) for n in names]
                print("| %s | %s | %s | %d | %s |" % ("quick" if quick else "full", op, judge,
                                                      statistics.median(r.get("reps") or 0 for r in rs),
                                                      " | ".join(cells)))


if __name__ == "__main__":
    main()
