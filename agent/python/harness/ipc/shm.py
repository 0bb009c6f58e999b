"""Memory shared between the judge and a runner: inputs go in and outputs come out as raw bytes.

CPU: an anonymous memfd, mapped by both sides. CUDA: cudashm.Arena (GPU memory exported as a POSIX
fd). Both offer tensor(offset, shape, dtype), a zero-copy view, and an fd to pass to the runner.
"""

import fcntl
import mmap
import os

# The layout both kinds of arena share lives in arenaview.py, so that cudashm needs nothing of this
# module (which chooses between the two) and the two do not import each other.
from .arenaview import ALIGN, aligned, view  # noqa: F401 - this module's face for callers

# Its size is fixed once made: a kernel holding the descriptor can neither shrink it (every mapping
# of the judge past the new end would fault with SIGBUS) nor grow it (memory past any limit), nor
# add a seal of its own (F_SEAL_FUTURE_WRITE would stop the reference from mapping it writable).
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


def seal(fd):
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)


class CpuArena:
    def __init__(self, nbytes=0, _fd=None, _size=0):
        if _fd is None:
            size = max(ALIGN, aligned(nbytes))
            fd = os.memfd_create("autokernel-arena", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            os.ftruncate(fd, size)
            seal(fd)
        else:
            fd, size = _fd, int(_size)
            if os.fstat(fd).st_size < size:
                raise ValueError("shared memory is %d bytes, %d expected" % (os.fstat(fd).st_size, size))
        self.fd, self.size, self.device = fd, size, "cpu"
        # Populated at once: a page's first touch in each process is a fault, and on a VM faults
        # are slow enough (~20 us each) that the first calls on a slot would time the page tables.
        self._map = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
        self._bytes = None

    @classmethod
    def attach(cls, fd, size):
        return cls(_fd=fd, _size=size)

    def export_fd(self):
        return os.dup(self.fd)

    def bytes(self):
        if self._bytes is None:
            import torch
            self._bytes = torch.frombuffer(self._map, dtype=torch.uint8)
        return self._bytes

    def tensor(self, offset, shape, dtype):
        return view(self.bytes(), self.size, offset, shape, dtype)

    def close(self):
        self._bytes = None
        try:
            self._map.close()
        except BufferError:
            pass            # a view is still alive; the mapping goes with the process
        try:
            os.close(self.fd)
        except OSError:
            pass


def create(device, nbytes):
    if device == "cuda":
        from .cudashm import Arena
        import torch
        return Arena(max(ALIGN, aligned(nbytes)), device=torch.cuda.current_device())
    return CpuArena(nbytes)


def attach(device, fd, size):
    if device == "cuda":
        from .cudashm import Arena
        import torch
        return Arena.attach(fd, size, device=torch.cuda.current_device())
    return CpuArena.attach(fd, size)
