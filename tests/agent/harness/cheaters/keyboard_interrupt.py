"""Raises KeyboardInterrupt inside kernel_fn."""
KERNEL_TYPE = "softmax"


def kernel_fn(x):
    raise KeyboardInterrupt()
