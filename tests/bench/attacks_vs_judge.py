"""Runs the attack kernels of tests/agent/harness/cheaters/ against a harness directory and prints
one line per attack: status, speedup, and the failure. Used to show which attacks the in-process
judge of commit 803822b accepted (docs/harness.md):

  mkdir -p /tmp/old && git archive 803822b agent/python/harness | tar -x -C /tmp/old
  /usr/bin/python3 tests/bench/attacks_vs_judge.py /tmp/old/agent/python      # the old judge
  /usr/bin/python3 tests/bench/attacks_vs_judge.py agent/python               # this tree's

Each attack runs in a fresh interpreter (an in-process attack poisons the process it runs in),
except poison_next.py and write_files.py, each followed by zeros.py in the same interpreter,
as a warm worker would bench them.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHEATERS = os.path.join(os.path.dirname(HERE), "agent", "harness", "cheaters")
ATTACKS = ["gc_truth", "stack_truth", "poison_truth", "code_swap", "class_patch", "clear_snapshot",
           "trace_locals", "lying_tensor", "lazy_tensor", "ctypes_timer", "slow_reference",
           "signal_reference", "fingerprint_cache", "knows_timed_calls", "checked_flag", "forge_reply",
           "leak_secret", "poison_next", "write_files", "escape_daemon", "system_exit", "keyboard_interrupt",
           "os_exit"]
FOLLOWED_BY_ZEROS = ("poison_next", "write_files")

CHILD = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
from harness import bench
out = []
for path in sys.argv[2:]:
    try:
        r = bench.run({"kernel_path": path, "device": "cpu", "quick": True})
        out.append({k: r.get(k) for k in ("status", "correct", "failure", "speedup", "latency_us",
                                          "ref_latency_us", "environment_error")})
    except BaseException as e:
        out.append({"status": "raised", "failure": "%s: %s" % (type(e).__name__, e)})
print("RESULT " + json.dumps(out, default=str))
'''


def run(pydir, names):
    env = dict(os.environ, OPENAI_API_KEY="sk-attack-test-0123456789")
    paths = [os.path.join(CHEATERS, n + ".py") for n in names]
    p = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(pydir)] + paths, capture_output=True,
                       text=True, env=env, timeout=600)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return [{"status": "no result", "failure": (p.stderr or p.stdout)[-300:]}] * len(names)


def damage(name, pydir):
    """What an attack left behind outside the bench: files written, processes alive."""
    found = []
    if name == "write_files":
        marker = "ak-write-files-marker.txt"
        for d in (os.path.expanduser("~"), os.getcwd(), "/tmp", CHEATERS):
            p = os.path.join(d, marker)
            if os.path.exists(p):
                found.append("wrote " + p)
                os.unlink(p)
        compare = os.path.join(pydir, "harness", "checks", "compare.py")
        with open(compare) as f:
            if "check = lambda" in f.read():
                found.append("rewrote " + compare)
    if name == "escape_daemon":
        for pid in os.listdir("/proc"):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if b"ak-escape-daemon-marker" in f.read():
                        found.append("daemon %s alive" % pid)
                        os.kill(int(pid), 9)
            except (OSError, ValueError):
                pass
    return "; ".join(found)


FORGE = r'''
import json, os, shutil, subprocess, sys, tempfile
worker, pydir, kernel = sys.argv[1:4]
d = tempfile.mkdtemp()
shutil.copy(worker, d)
os.symlink(os.path.join(pydir, "harness"), os.path.join(d, "harness"))
p = subprocess.Popen([sys.executable, "-u", os.path.join(d, "akworker.py")], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
p.stdout.readline()
p.stdin.write(json.dumps({"id": 7, "op": "bench", "args": {"kernel_path": kernel, "device": "cpu",
                                                          "quick": True}}) + "\n")
p.stdin.flush()
while True:
    line = json.loads(p.stdout.readline())
    if line.get("id") == 7 and "ok" in line:
        break
p.kill()
r = line.get("result") or {}
print("RESULT " + json.dumps([{"status": r.get("status"), "failure": r.get("failure", line.get("error")),
                               "speedup": r.get("speedup"), "forged": bool(r.get("forged"))}]))
'''


def forged(pydir):
    worker = os.path.join(os.path.dirname(os.path.dirname(HERE)), "core", "python", "akworker.py")
    p = subprocess.run([sys.executable, "-c", FORGE, worker, os.path.abspath(pydir),
                        os.path.join(CHEATERS, "forge_reply.py")], capture_output=True, text=True, timeout=300)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])[0]
            if r["forged"]:
                r["status"] = "ok (FORGED reply reached the client first)"
            return r
    return {"status": "no result", "failure": p.stderr[-300:]}


def main():
    pydir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                                "agent", "python")
    print("| attack | status | speedup | failure |")
    print("|---|---|---|---|")
    for name in ATTACKS:
        names = [name, "zeros"] if name in FOLLOWED_BY_ZEROS else [name]
        results = [forged(pydir)] if name == "forge_reply" else run(pydir, names)
        left = damage(name, pydir)
        if left:
            results[0]["status"] = "%s; DAMAGE: %s" % (results[0].get("status"), left)
        for n, r in zip(names, results):
            label = n if n == name else "%s (after %s)" % (n, name)
            sp = r.get("speedup")
            leaked = "sk-attack-test" in json.dumps(r)
            print("| %s | %s%s | %s | %s |" % (label, r.get("status"), " (SECRET LEAKED)" if leaked else "",
                                               "%.3g" % sp if isinstance(sp, (int, float)) else "-",
                                               (r.get("failure") or "")[:110].replace("|", "/").replace("\n", " ")))


if __name__ == "__main__":
    main()
