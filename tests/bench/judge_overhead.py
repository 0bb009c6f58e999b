"""The cost of isolation on this machine's CPU: the same starters benched by the in-process judge of
commit 803822b and by the isolated judge, alternating, each in one warm process (as a worker would).
Reports per-bench wall time (medians), the timing noise each judge reported (noise_pct, the standard
error of its median) and the run-to-run spread of the latency it measured for the same kernel
(max - min over the median, across benches): the noise a keep decision actually meets.

  mkdir -p /tmp/old && git archive 803822b agent/python/harness | tar -x -C /tmp/old
  /usr/bin/python3 tests/bench/judge_overhead.py /tmp/old/agent/python [rounds]
"""

import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NEW = os.path.join(os.path.dirname(os.path.dirname(HERE)), "agent", "python")
OPS = ("softmax", "rmsnorm", "matmul", "gelu")

CHILD = r'''
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from harness import bench
starters = os.path.join(sys.argv[1], "harness", "starters", "cpu")
rounds = int(sys.argv[2])
for r in range(rounds + 1):                       # round 0 warms the process (sandboxes, imports)
    for op in %r:
        t = time.perf_counter()
        res = bench.run({"kernel_path": os.path.join(starters, op + ".py"), "device": "cpu", "quick": True,
                         "seed": 100 + r})
        print(json.dumps({"round": r, "op": op, "wall": time.perf_counter() - t, "status": res["status"],
                          "noise": res.get("noise_pct"), "latency": res.get("latency_us"),
                          "speedup": res.get("speedup")}), flush=True)
''' % (OPS,)


def collect(pydir, rounds):
    p = subprocess.run([sys.executable, "-c", CHILD, pydir, str(rounds)], capture_output=True, text=True)
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    if not rows:
        sys.exit(p.stderr[-2000:])
    return [r for r in rows if r["round"] > 0]


def main():
    old, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    data = {"in-process (803822b)": collect(old, rounds), "isolated": collect(NEW, rounds)}
    print("| judge | op | bench wall s (median) | noise_pct (median) | latency us (median) | run-to-run spread % "
          "| speedup (median) | ok |")
    print("|---|---|---|---|---|---|---|---|")
    for name, rows in data.items():
        for op in OPS:
            rs = [r for r in rows if r["op"] == op]
            med = lambda k: statistics.median([r[k] for r in rs if r[k] is not None])  # noqa: E731
            lat = [r["latency"] for r in rs if r["latency"]]
            spread = 100.0 * (max(lat) - min(lat)) / statistics.median(lat) if lat else float("nan")
            print("| %s | %s | %.2f | %.2f | %.1f | %.1f | %.2f | %d/%d |" % (
                name, op, med("wall"), med("noise"), med("latency"), spread, med("speedup"),
                sum(r["status"] == "ok" for r in rs), len(rs)))
    for name, rows in data.items():
        print("%s: median bench %.2f s over %d benches" % (name, statistics.median(r["wall"] for r in rows), len(rows)))


if __name__ == "__main__":
    main()
