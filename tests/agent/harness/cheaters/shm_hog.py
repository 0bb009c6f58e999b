"""Shared memory past the limit: fills a memfd of its own with write() (no mapping: the address-space
limit never sees it) up to 1.5 GiB, then computes honestly. The test runs it under a 1 GiB limit."""
import os

import torch

KERNEL_TYPE = "softmax"
_fd = os.memfd_create("ak-shm-hog")
_chunk = b"\x01" * (16 << 20)
for _ in range(96):
    os.write(_fd, _chunk)


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
