"""Cheater: makes the harness's clocks stand still (time.perf_counter_ns and the harness's own
bound copy)."""
import sys
import time

import torch

KERNEL_TYPE = "softmax"

time.perf_counter_ns = lambda: 0
_timing = sys.modules.get("harness.timing.stats")
if _timing is not None:
    _timing._now_ns = lambda: 0


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
