"""Invisible processes: a helper whose main thread exits while another thread keeps running. /proc
then shows its thread group as a zombie; a judge that skips zombies when it lists the sandbox's
processes never stops it (it burns a core while the reference is timed) and never kills it (it
outlives the bench). The marker in its command line lets the test find it."""
import os
import sys

import torch

KERNEL_TYPE = "softmax"
MARKER = "ak-zombie-helper-marker"

HELPER = r"""
import ctypes, platform, threading
def spin():
    x = 0
    while True:
        x = (x + 1) % 1000003
threading.Thread(target=spin).start()
ctypes.CDLL(None).syscall({"aarch64": 93}.get(platform.machine(), 60), 0)   # SYS_exit: this thread only
"""

if os.fork() == 0:
    try:
        os.execv(sys.executable, [sys.executable, "-c", HELPER, MARKER])
    finally:
        os._exit(0)


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
