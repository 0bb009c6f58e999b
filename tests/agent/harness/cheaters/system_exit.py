"""Ends the process politely from inside kernel_fn: the candidate's failure, not the machine's."""
import sys

KERNEL_TYPE = "softmax"


def kernel_fn(x):
    sys.exit(0)
