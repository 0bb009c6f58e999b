"""Calling a kernel under guard: poisoned allocations, pristine-input checks, aliasing checks,
fingerprints at return and after synchronising, reuse of previously returned outputs."""

import contextlib
import threading
import time

import torch

from .compare import bit_equal, overlaps

_perf = time.perf_counter


class KernelFault(Exception):
    """kernel_fn misbehaved in a way that is not a numerical mismatch (reason in str)."""


FATAL_MARKERS = ("illegal memory access", "CUDA error", "device-side assert", "misaligned address",
                 "unspecified launch failure", "illegal instruction", "CUBLAS_STATUS_EXECUTION_FAILED",
                 "cudaErrorLaunchFailure", "CUDA_ERROR_")


def is_fatal(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return any(m.lower() in text.lower() for m in FATAL_MARKERS)


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


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


class CheckedCaller:
    """Calls kernel_fn for the correctness stages and remembers the previous output."""

    def __init__(self, fn, device, arg_names):
        self.fn = fn
        self.device = device
        self.arg_names = arg_names
        self.prev = None            # (output tensor as returned, its snapshot)
        self.calls = 0

    def __call__(self, inputs, out_nbytes=0):
        """Returns the output as it was at return (a snapshot); raises KernelFault."""
        pristine = [t.clone() for t in inputs]
        threads_before = set(threading.enumerate())
        sync(self.device)
        with poisoned_allocations(self.device, out_nbytes):
            out = self.fn(*inputs)
        self.calls += 1
        if not isinstance(out, torch.Tensor):
            raise KernelFault("kernel_fn returned %s, expected a tensor" % type(out).__name__)
        # Fingerprint at return: on CUDA the clone is ordered on the current stream, so work left
        # on another stream or thread is not in it.
        snap = out.detach().clone()
        sync(self.device)
        self._join_new_threads(threads_before)
        if not bit_equal(snap, out):
            raise KernelFault("the output changed after kernel_fn returned: work was deferred to "
                              "another thread or stream (results must be complete at return)")
        for name, now, before in zip(self.arg_names, inputs, pristine):
            if not bit_equal(now, before):
                raise KernelFault("kernel_fn modified its input `%s` (inputs must stay unchanged)"
                                  % name)
            if overlaps(out, now):
                raise KernelFault("the output shares memory with input `%s` (return a new tensor)"
                                  % name)
        if self.prev is not None:
            prev_out, prev_snap = self.prev
            if prev_out is out:
                raise KernelFault("kernel_fn returned the same tensor object as on its previous call "
                                  "(results reused: each call must return a fresh output)")
            if not bit_equal(prev_out, prev_snap):
                raise KernelFault("kernel_fn overwrote the tensor it returned on an earlier call "
                                  "(each call must return a fresh output)")
        self.prev = (out, snap)
        return snap

    @staticmethod
    def _join_new_threads(before, limit_s=0.5):
        deadline = _perf() + limit_s
        for t in threading.enumerate():
            if t not in before and t.is_alive():
                t.join(max(0.0, deadline - _perf()))

    def forget(self):
        self.prev = None
