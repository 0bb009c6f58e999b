"""Runner-side guards of a checked call (runner.py): poisoned allocations, and which exceptions
mean the CUDA context is lost."""

import contextlib

import torch


FATAL_MARKERS = ("illegal memory access", "CUDA error", "device-side assert", "misaligned address",
                 "unspecified launch failure", "illegal instruction", "CUBLAS_STATUS_EXECUTION_FAILED",
                 "cudaErrorLaunchFailure", "CUDA_ERROR_")


def is_fatal(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return any(m.lower() in text.lower() for m in FATAL_MARKERS)


def _poison_value(dtype):
    if dtype.is_floating_point:
        return float("nan")
    if dtype == torch.bool:
        return True
    return -123456789 if torch.iinfo(dtype).bits >= 32 else -123


@contextlib.contextmanager
def poisoned_allocations(device, nbytes=0):
    """Memory that kernel_fn allocates without writing reads as NaN, never as a stale result.

    Two layers: torch.empty* are wrapped to fill with poison (fill cost is outside the timed
    runs: this is used only in correctness stages), and a block of `nbytes` filled with 0xFF
    (NaN in every float format) is freed into the allocator just before the call, so even a
    kernel holding its own reference to torch.empty gets recycled poison rather than an old
    result on CUDA's caching allocator and glibc's free lists.
    """
    if nbytes > 0:
        block = torch.empty(int(nbytes), dtype=torch.uint8, device=device)
        block.fill_(255)
        del block
    originals = {name: getattr(torch, name) for name in ("empty", "empty_like", "empty_strided")}
    orig_new_empty = torch.Tensor.new_empty

    def wrap(fn):
        def poisoned(*args, **kwargs):
            t = fn(*args, **kwargs)
            with torch.no_grad():
                t.fill_(_poison_value(t.dtype))
            return t
        poisoned.__wrapped__ = fn
        return poisoned

    try:
        for name, fn in originals.items():
            setattr(torch, name, wrap(fn))
        torch.Tensor.new_empty = wrap(orig_new_empty)
        yield
    finally:
        for name, fn in originals.items():
            setattr(torch, name, fn)
        torch.Tensor.new_empty = orig_new_empty
