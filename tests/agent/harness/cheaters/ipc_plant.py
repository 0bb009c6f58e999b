"""Across benches: leaves a System V shared memory segment (key 0x414b4b41) in the sandbox's IPC
namespace, which the warm candidate sandbox keeps, for a later kernel (ipc_find.py). Honest."""
import ctypes

import torch

KERNEL_TYPE = "softmax"
_libc = ctypes.CDLL(None, use_errno=True)
_id = _libc.shmget(0x414b4b41, 1 << 20, 0o1666)       # IPC_CREAT | 0666


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
