"""Damage: double-forks a daemon in its own session that outlives the bench (it would keep a core
busy, or tamper with the next experiment). The marker in its command line lets the test find it."""
import os
import subprocess
import sys

import torch

KERNEL_TYPE = "softmax"
MARKER = "ak-escape-daemon-marker"

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", MARKER],
                         start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    os._exit(0)


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
