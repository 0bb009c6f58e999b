#!/usr/bin/env python3
"""On the GPU machine: can a kernel's outputs live in GPU memory the judge reads (harness/ipc/heap.py)?

The judge side (this process) creates a VMM arena and hands its descriptor to a child, which routes
its allocations into a MemPool over it: eager calls under use_mem_pool, and a CUDA graph captured
into the pool and replayed. The child prints where each output lies; this process reads those bytes
through its own mapping while the child waits, and compares them with its own computation.

    python3 tests/bench/gpu_heap_probe.py [OUT_DIR]     # prints one JSON line per check
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))

CHILD = r"""
import json, sys, torch, importlib.util
from harness import cudashm, heap
fd, size = int(sys.argv[1]), int(sys.argv[2])
torch.cuda.init()
arena = cudashm.Arena.attach(fd, size)
h = heap.Heap(arena)
def starter(name):
    spec = importlib.util.spec_from_file_location(name, sys.argv[3] + "/" + name + ".py")
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m.kernel_fn
soft = starter("softmax"); mm = starter("matmul")
g = torch.Generator(device="cuda").manual_seed(1)
x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16, generator=g)
a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16, generator=g)
b = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16, generator=g)
report = {}
def note(name, t):
    report[name] = {"held": h.holds(t), "offset": h.offset(t), "shape": list(t.shape)}
keep = []
with torch.no_grad():
    with h.use():
        y = torch.softmax(x.float(), -1).to(torch.bfloat16); keep.append(y); note("eager_torch", y)
        y = soft(x); keep.append(y); note("eager_triton_softmax", y)
        y = mm(a, b); keep.append(y); note("eager_triton_matmul", y)
    torch.cuda.synchronize()
    for name, fn, args in (("graph_triton_softmax", soft, (x,)), ("graph_triton_matmul", mm, (a, b))):
        try:
            side = torch.cuda.Stream(); side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                fn(*args)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=h.pool.id):
                y = fn(*args)
            graph.replay(); torch.cuda.synchronize()
            keep.append((graph, y)); note(name, y)
        except BaseException as exc:
            report[name] = {"error": "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")}
report["spilled"] = h.spilled
report["top_mb"] = (h.top - h.base) / 2**20
print(json.dumps(report), flush=True)
sys.stdin.readline()
"""


def main():
    import torch
    from harness.ipc import cudashm, heap
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")
    result = {"torch": torch.__version__, "supported": heap.supported()}
    torch.cuda.init()
    arena = cudashm.Arena(256 << 20)
    fd = arena.export_fd()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(fd), str(arena.size),
                              os.path.join(ROOT, "agent", "python", "harness", "starters", "triton")],
                             pass_fds=[fd], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "agent", "python")))
    os.close(fd)
    line = child.stdout.readline()
    try:
        report = json.loads(line)
    except ValueError:
        child.kill()
        result["child_failed"] = line + child.stdout.read()
        print(json.dumps(result))
        return 1
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16, generator=g)
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16, generator=g)
    truth = {"softmax": torch.softmax(x.float(), -1), "matmul": (a.float() @ b.float())}
    for name, entry in report.items():
        if not isinstance(entry, dict) or "offset" not in entry:
            continue
        if entry["held"]:
            got = arena.tensor(entry["offset"], entry["shape"], torch.bfloat16).float()
            ref = truth["matmul" if "matmul" in name else "softmax"]
            entry["rel_err"] = float((got - ref).norm() / ref.norm())
    child.stdin.write("\n")
    child.stdin.flush()
    child.wait(timeout=30)
    result.update(report)
    text = json.dumps(result, indent=1)
    print(text)
    with open(os.path.join(out_dir, "gpu_heap_probe.json"), "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
