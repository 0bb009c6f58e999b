"""Attack (rewriting the judge): a profile hook that loosens the tolerance in the frame of the
judge's comparison whenever it is called (frame locals rewritten through the C API)."""
import ctypes
import sys

import torch

KERNEL_TYPE = "softmax"


def _hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "check" and "tolerance" in frame.f_code.co_varnames:
        frame.f_locals["tolerance"] = {"atol": 1e30, "rtol": 1e30}
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return None


sys.setprofile(_hook)
import threading  # noqa: E402
threading.setprofile(_hook)


def kernel_fn(x):
    sys.setprofile(_hook)
    return torch.zeros_like(x)
