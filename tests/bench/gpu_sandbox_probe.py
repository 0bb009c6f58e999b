"""Probe of the GPU machine for the isolated judge (docs/harness.md): does bubblewrap run there, does a
CUDA program run inside it, can GPU memory exported as a POSIX fd (cudashm.Arena) be mapped across the
sandbox's PID namespace, what do imports and CUDA start-up cost, and how does a wall-clock-timed batch
through a pipe compare with do_bench in-process. Prints one JSON object per probe.

python3 tests/bench/gpu_sandbox_probe.py BWRAP
"""

import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "agent", "python")
sys.path.insert(0, PYDIR)

CHILD = r'''
import os, sys, time, json, struct
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
try:
    import triton
except Exception:
    triton = None
t2 = time.perf_counter()
torch.cuda.init(); torch.empty(1, device="cuda"); torch.cuda.synchronize()
t3 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from harness import cudashm
fd, size, rfd, wfd = (int(a) for a in sys.argv[2:6])
arena = cudashm.Arena.attach(fd, size)
t4 = time.perf_counter()
x = arena.tensor(0, (4096, 4096), torch.bfloat16)
out_base = 4096 * 4096 * 2 * 8
rd = os.fdopen(rfd, "rb", buffering=0); wr = os.fdopen(wfd, "wb", buffering=0)
wr.write((json.dumps({"import_torch": t1 - t0, "import_triton": t2 - t1, "cuda_init": t3 - t2,
                      "attach": t4 - t3, "sum": float(x.float().sum()), "pid": os.getpid(),
                      "uid": os.getuid(), "env": sorted(os.environ)}) + "\n").encode())
slots = [arena.tensor(i * 4096 * 4096 * 2, (4096, 4096), torch.bfloat16) for i in range(8)]
outs = [arena.tensor(out_base + i * 4096 * 4096 * 2, (4096, 4096), torch.bfloat16) for i in range(8)]
buf = b""
while True:
    line = rd.readline()
    if not line:
        break
    msg = json.loads(line)
    if msg["op"] == "exit":
        break
    for k in range(msg["n"]):
        j = msg["slots"][k] if msg["slots"] else 0
        y = torch.softmax(slots[j], dim=-1)
        if msg.get("copy"):
            outs[k % 8].copy_(y)
    torch.cuda.synchronize()
    wr.write(b"done\n")
'''


def bwrap_argv(bwrap, extra_ro=()):
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
            "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
            "--chdir", "/tmp"]
    for name in sorted(os.listdir("/dev")):
        if name.startswith("nvidia"):
            argv += ["--dev-bind", "/dev/" + name, "/dev/" + name]
    return argv


def probe_sandbox(bwrap):
    import torch
    from harness.ipc import cudashm
    torch.cuda.init()
    size = 4096 * 4096 * 2 * 16
    arena = cudashm.Arena(size)
    x = arena.tensor(0, (4096, 4096), torch.bfloat16)
    for i in range(8):
        arena.tensor(i * 4096 * 4096 * 2, (4096, 4096), torch.bfloat16).copy_(torch.randn(4096, 4096, device="cuda"))
    torch.cuda.synchronize()
    expect = float(x.float().sum())
    fd = arena.export_fd()
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    argv = bwrap_argv(bwrap) + [sys.executable, "-I", "-c", CHILD, PYDIR, str(fd), str(arena.size), str(r1), str(w2)]
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, pass_fds=(fd, r1, w2))
    os.close(r1)
    os.close(w2)
    os.close(fd)
    rd = os.fdopen(r2, "rb", buffering=0)
    wr = os.fdopen(w1, "wb", buffering=0)
    hello = json.loads(rd.readline())
    hello["spawn_to_hello_s"] = time.perf_counter() - t0
    hello["expect_sum"] = expect
    print(json.dumps({"probe": "sandbox_vmm", **hello}), flush=True)

    import triton.testing
    res = {}
    for copy in (False, True):
        for n in (1, 4, 16):
            walls = []
            for rep in range(30):
                msg = json.dumps({"op": "call", "n": n, "slots": [(rep * n + k) % 8 for k in range(n)], "copy": copy})
                t = time.perf_counter_ns()
                wr.write((msg + "\n").encode())
                assert rd.readline() == b"done\n"
                walls.append((time.perf_counter_ns() - t) / 1e3)
            walls.sort()
            res["copy%d_n%d_us_per_call" % (copy, n)] = walls[len(walls) // 2] / n
    # Zero-work round trip (n=0): the pipe + sync overhead.
    walls = []
    for rep in range(50):
        t = time.perf_counter_ns()
        wr.write(b'{"op":"call","n":0,"slots":[]}\n')
        rd.readline()
        walls.append((time.perf_counter_ns() - t) / 1e3)
    walls.sort()
    res["roundtrip_us"] = walls[len(walls) // 2]
    xs = [arena.tensor(i * 4096 * 4096 * 2, (4096, 4096), torch.bfloat16) for i in range(8)]
    res["do_bench_softmax_us"] = 1e3 * triton.testing.do_bench(lambda: torch.softmax(xs[0], dim=-1), warmup=25, rep=100, return_mode="median")
    res["do_bench_copy_us"] = 1e3 * triton.testing.do_bench(lambda: xs[1].copy_(xs[2]), warmup=25, rep=100, return_mode="median")
    print(json.dumps({"probe": "timing", **res}), flush=True)
    wr.write(b'{"op":"exit"}\n')
    p.wait(timeout=30)
    print(json.dumps({"probe": "exit", "rc": p.returncode}), flush=True)


def probe_fork(bwrap):
    code = r'''
import os, time, sys
t0 = time.perf_counter()
import torch, triton
t1 = time.perf_counter()
pid = os.fork()
if pid == 0:
    t2 = time.perf_counter()
    torch.cuda.init(); a = torch.randn(1024, 1024, device="cuda"); torch.cuda.synchronize()
    print("child cuda init %.3f s sum %.3f" % (time.perf_counter() - t2, float(a.sum())), flush=True)
    os._exit(0)
_, st = os.waitpid(pid, 0)
print("import %.3f s, child status %d" % (t1 - t0, st), flush=True)
'''
    out = subprocess.run(bwrap_argv(bwrap) + [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    print(json.dumps({"probe": "fork_after_import", "rc": out.returncode, "out": out.stdout[-800:], "err": out.stderr[-800:]}), flush=True)


def probe_rlimit(bwrap):
    code = "import torch; torch.cuda.init(); a = torch.empty(2**30, dtype=torch.uint8, device='cuda'); import numpy; b = numpy.ones(2**28); print('ok')"
    for name, lim in (("RLIMIT_DATA", resource.RLIMIT_DATA), ("RLIMIT_AS", resource.RLIMIT_AS)):
        def pre(lim=lim):
            resource.setrlimit(lim, (16 << 30, 16 << 30))
        out = subprocess.run(bwrap_argv(bwrap) + [sys.executable, "-I", "-c", code], capture_output=True, text=True,
                             timeout=120, preexec_fn=pre)
        print(json.dumps({"probe": "rlimit", "which": name, "rc": out.returncode, "out": out.stdout[-300:],
                          "err": out.stderr[-600:]}), flush=True)


def main():
    bwrap = sys.argv[1]
    ver = subprocess.run([bwrap, "--version"], capture_output=True, text=True)
    print(json.dumps({"probe": "bwrap", "rc": ver.returncode, "out": ver.stdout.strip(), "err": ver.stderr.strip(),
                      "system_bwrap": subprocess.run(["sh", "-c", "command -v bwrap"], capture_output=True, text=True).stdout.strip(),
                      "userns": open("/proc/sys/user/max_user_namespaces").read().strip(),
                      "dev": sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))}), flush=True)
    t = time.perf_counter()
    out = subprocess.run(bwrap_argv(bwrap) + ["/bin/true"], capture_output=True, text=True)
    print(json.dumps({"probe": "bwrap_true", "rc": out.returncode, "err": out.stderr[-500:], "s": time.perf_counter() - t}), flush=True)
    for fn in (probe_sandbox, probe_fork, probe_rlimit):
        try:
            fn(bwrap)
        except Exception:  # noqa: BLE001
            import traceback
            print(json.dumps({"probe": fn.__name__, "exception": traceback.format_exc()[-1500:]}), flush=True)


if __name__ == "__main__":
    main()
