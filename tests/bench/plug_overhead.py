"""Host cost of a plugged call (#40: where the time of a small model goes): a stack of tiny Linears
(8 x 8, batch 2, fp32, one thread) timed per Linear call in eager PyTorch, with the CPU matmul starter
called directly on pre-transposed weights, and with the same starter plugged by modelplug (module
hook + route + contract checks). The difference of the last two is what the plug itself costs a call.

    /usr/bin/python3 tests/bench/plug_overhead.py
"""
import importlib.util
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from modelplug import plug  # noqa: E402

N = 48


def starter(op):
    path = os.path.join(ROOT, "agent", "python", "harness", "starters", "cpu", op + ".py")
    spec = importlib.util.spec_from_file_location("starter_" + op, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.kernel_fn


def per_call_us(f, reps=200):
    ts = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        ts.append((time.perf_counter() - t) / reps / N * 1e6)
    return statistics.median(ts)


def main():
    torch.set_num_threads(1)
    model = nn.Sequential(*[nn.Linear(8, 8, bias=False) for _ in range(N)]).eval()
    x = torch.randn(2, 8)
    fn = starter("matmul")
    with torch.no_grad():
        eager = per_call_us(lambda: model(x))
        wts = [m.weight.t().contiguous() for m in model]

        def direct():
            y = x
            for wt in wts:
                y = fn(y, wt)
            return y
        alone = per_call_us(direct)
        plug.Plugged(model, [plug.Kernel("k", "matmul", fn, [str(i) for i in range(N)], torch.float32)])
        plugged = per_call_us(lambda: model(x))
    print("per Linear call, us: eager %.1f, starter called directly %.1f, plugged %.1f: the plug's own cost %.1f"
          % (eager, alone, plugged, plugged - alone))


if __name__ == "__main__":
    main()
