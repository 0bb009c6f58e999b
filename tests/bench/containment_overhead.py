"""Per-bench cost of containment (issue 39): the phases a cgroup per candidate changes, timed by
wrapping remote.Candidate's methods, in one warm process.

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tests/bench/containment_overhead.py PYDIR KERNEL N [DEVICE]

PYDIR: an agent/python directory (this tree's, or an older harness from `git archive`); KERNEL: a
CPU kernel file (a starter); N: benches after a first one that starts the sandboxes. Prints one
JSON line: medians of the new process (fork, and adoption into its cgroup) and of the end of the
bench (kill, wipe), the sum of freeze+thaw per bench, and the bench's median wall time.
AUTOKERNEL_CGROUP=v1|v2|none picks the hierarchy. Results: docs/benchmarks.md, "Containment".
"""
import sys, time, statistics, json
sys.path.insert(0, sys.argv[1])
from harness import bench
from harness.runners import pool
k = sys.argv[2]
DEVICE = sys.argv[4] if len(sys.argv) > 4 else "cpu"
acc = {"fork": [], "finish": [], "freeze": [], "thaw": []}
def timed(name, fn):
    def w(*a, **kw):
        t = time.perf_counter(); r = fn(*a, **kw); acc[name].append(time.perf_counter() - t); return r
    return w
pool.Candidate.__init__ = timed("fork", pool.Candidate.__init__)
pool.Candidate.finish = timed("finish", pool.Candidate.finish)
pool.Candidate.freeze = timed("freeze", pool.Candidate.freeze)
pool.Candidate.thaw = timed("thaw", pool.Candidate.thaw)
bench.run({"kernel_path": k, "device": DEVICE, "quick": True})
for v in acc.values(): v.clear()
N = int(sys.argv[3]); tot = []
for i in range(N):
    t = time.perf_counter(); r = bench.run({"kernel_path": k, "device": DEVICE, "quick": True}); tot.append(time.perf_counter() - t)
out = {n: round(statistics.median(v) * 1e3, 2) for n, v in acc.items() if n in ("fork", "finish")}
out["freeze+thaw_per_bench_ms"] = round((sum(acc["freeze"]) + sum(acc["thaw"])) / N * 1e3, 1)
out["freezes_per_bench"] = len(acc["freeze"]) // N
out["bench_median_s"] = round(statistics.median(tot), 3)
out["cgroup"] = r["isolation"].get("cgroup"); out["status"] = r["status"]
print(json.dumps(out))
