"""Ends the process at once (os._exit) inside kernel_fn."""
import os

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    os._exit(0)
