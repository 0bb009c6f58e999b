"""Cheater: returns at once and fills the output later from another thread."""
import threading
import time

import torch

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    out = torch.empty_like(x)

    def fill():
        time.sleep(0.02)
        out.copy_(torch.softmax(x, dim=-1))
    threading.Thread(target=fill, daemon=True).start()
    return out
