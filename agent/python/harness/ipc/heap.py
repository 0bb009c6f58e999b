"""Where a kernel's timed outputs live on CUDA: GPU memory the judge can read without the kernel.

The judge creates a VMM allocation (cudashm.Arena) and hands its descriptor to the kernel's runner,
which routes its allocations during timed calls into it: a torch MemPool whose allocator (two ctypes
callbacks) carves segments out of that memory. Outputs then stay where the kernel put them (no copy
into the judge's region inside anyone's clock, a copy a kernel could skip by writing there itself:
cheaters/direct_output.py in tests/agent/harness), and the judge reads the checked ones through its
own mapping of the same memory while the kernel's process is stopped. Whatever the runner says about
an output, the bytes at the offset it names are what is checked.

When the heap is full, segments come from cuMemAlloc instead: a kernel's temporaries may live
there; an output that does not lie in the heap is copied into it by the runner, inside the clock
(the kernel's own cost). Frees inside the heap only give back its top (the caching allocator above
keeps freed blocks and rarely returns segments).
"""

import ctypes

from . import cudashm

ALIGN = 512
_ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)


def supported():
    """Whether this torch can route allocations into a pool with our own allocator (the judge asks
    its own torch, the same install as the runner's: the kernel cannot talk it out of holding)."""
    import torch
    return (torch.cuda.is_available() and hasattr(torch.cuda, "MemPool")
            and hasattr(torch.cuda, "use_mem_pool") and hasattr(torch._C, "_cuda_customAllocator"))


class Heap:
    """A MemPool over an attached arena (in the runner)."""

    def __init__(self, arena):
        import torch
        lib = cudashm._cuda()
        for name in ("cuMemAlloc_v2", "cuMemFree_v2"):
            getattr(lib, name).restype = ctypes.c_int
        self._lib = lib
        self.arena = arena
        self.base, self.end = arena.ptr, arena.ptr + arena.size
        self.top = self.base
        self.spilled = 0
        # The callbacks must outlive the allocator: torch keeps only their addresses.
        self._alloc_cb, self._free_cb = _ALLOC(self._alloc), _FREE(self._free)
        self.allocator = torch._C._cuda_customAllocator(ctypes.cast(self._alloc_cb, ctypes.c_void_p).value,
                                                        ctypes.cast(self._free_cb, ctypes.c_void_p).value)
        self.pool = torch.cuda.MemPool(self.allocator)

    def _alloc(self, size, device, stream):
        at = (self.top + ALIGN - 1) // ALIGN * ALIGN
        if at + size <= self.end:
            self.top = at + size
            return at
        ptr = ctypes.c_ulonglong()
        if self._lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size)) != 0:
            return None
        self.spilled += 1
        return ptr.value

    def _free(self, ptr, size, device, stream):
        if ptr is None:
            return
        if self.base <= ptr < self.end:
            if ptr + size == self.top:
                self.top = ptr
            return
        self._lib.cuMemFree_v2(ctypes.c_ulonglong(ptr))

    def holds(self, tensor):
        """The tensor's bytes lie inside the heap."""
        start = tensor.data_ptr()
        return self.base <= start and start + tensor.numel() * tensor.element_size() <= self.end

    def offset(self, tensor):
        return tensor.data_ptr() - self.base

    def use(self):
        import torch
        return torch.cuda.use_mem_pool(self.pool)
