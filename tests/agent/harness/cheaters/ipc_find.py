"""Across benches: says in its import error whether it found ipc_plant.py's System V segment."""
import ctypes

KERNEL_TYPE = "softmax"
_found = ctypes.CDLL(None, use_errno=True).shmget(0x414b4b41, 0, 0) >= 0
raise RuntimeError("ipc_find found %s" % ("the segment" if _found else "nothing"))


def kernel_fn(x):
    return x
