"""Reading another process's memory (process_vm_readv): how the judge takes a CPU kernel's outputs
from its stopped process, so that no copy into shared memory sits inside anyone's clock.

It needs ptrace rights over the process: the judge is its ancestor and owns its user namespace, so
a kernel cannot refuse (PR_SET_DUMPABLE does not stop it); a kernel.yama.ptrace_scope of 2 or 3
does, and then the judge falls back to copies (timing/rounds.py says so in the result).
"""

import ctypes
import errno

# What the system says when it will not let this process read another at all (ptrace policy, no
# such call); anything else (a bad address, a gone process) is about the address asked for.
REFUSALS = (errno.EPERM, errno.EACCES, errno.ENOSYS)


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


_libc = None


def _lib():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.process_vm_readv.restype = ctypes.c_ssize_t
        _libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong,
                                           ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    return _libc


def read(pid, remote_addr, local_addr, nbytes):
    """Copies nbytes from remote_addr in process pid to local_addr here; returns the bytes read
    (fewer on a bad address), or -errno on a refusal."""
    done = 0
    while done < nbytes:
        local = _IoVec(local_addr + done, nbytes - done)
        remote = _IoVec(remote_addr + done, nbytes - done)
        n = _lib().process_vm_readv(int(pid), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if n < 0:
            return -ctypes.get_errno() if done == 0 else done
        if n == 0:
            break
        done += n
    return done
