"""Attack (bending the baseline): a 200 us interval timer whose signal handler burns CPU, so
whatever runs between the kernel's calls (the reference) is slowed down; the kernel switches the
timer off while it runs."""
import signal
import time

import torch

KERNEL_TYPE = "softmax"


def _burn(signum, frame):
    end = time.perf_counter() + 0.00015
    while time.perf_counter() < end:
        pass


signal.signal(signal.SIGALRM, _burn)
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)


def kernel_fn(x):
    old = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        y = torch.exp(x - x.max(dim=-1, keepdim=True).values)
        return y / y.sum(dim=-1, keepdim=True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, *old) if old[0] else signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
