"""Attack (bending the clock): through ctypes, points the C function behind time.perf_counter_ns at
the one behind time.thread_time_ns (CPU time of the calling thread); the function object, and so an
identity check, is unchanged. The kernel then does its work in another thread and waits for it, so
the caller's thread burns almost no CPU time while the kernel runs, and the reference (computed on
the caller's thread) does."""
import ctypes
import threading
import time

import torch

KERNEL_TYPE = "softmax"


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


def _methoddef(builtin):
    # PyCFunctionObject: PyObject_HEAD (refcount, type), then PyMethodDef *m_ml.
    return _MethodDef.from_address(ctypes.c_void_p.from_address(id(builtin) + 16).value)


try:
    _methoddef(time.perf_counter_ns).ml_meth = _methoddef(time.thread_time_ns).ml_meth
except Exception:  # noqa: BLE001
    pass


def kernel_fn(x):
    box = []
    worker = threading.Thread(target=lambda: box.append(torch.softmax(x, dim=-1)))
    worker.start()
    worker.join()
    return box[0]
