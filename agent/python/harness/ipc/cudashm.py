"""GPU memory shared between the judge and a sandboxed candidate process.

Legacy CUDA IPC handles (what torch.multiprocessing uses) carry the exporter's PID and cannot be
opened from another PID namespace, which is exactly where the candidate runs. The driver's virtual
memory management API can export an allocation as a POSIX file descriptor instead: the judge
creates the allocation, passes the descriptor to the child at spawn (no PID lookup involved), and
both map the same physical memory. Everything goes through ctypes on libcuda.so.1, loaded at run
time; no torch CUDA IPC is involved.

Arena(nbytes) in the judge; Arena.attach(fd, nbytes) in the child. arena.tensor(offset, shape,
dtype) is a torch tensor over the mapping (zero copy, __cuda_array_interface__).
"""

import ctypes
import os

_CU_MEM_ALLOCATION_TYPE_PINNED = 1
_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
_CU_MEM_LOCATION_TYPE_DEVICE = 1
_CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", _Location), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class CudaShmError(RuntimeError):
    pass


_lib = None


def _cuda():
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CudaShmError("cannot load libcuda.so.1: %s" % e)
        for name in ("cuInit", "cuDeviceGet", "cuMemGetAllocationGranularity", "cuMemCreate",
                     "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle",
                     "cuMemAddressReserve", "cuMemMap", "cuMemSetAccess", "cuMemUnmap",
                     "cuMemAddressFree", "cuMemRelease", "cuGetErrorString"):
            getattr(lib, name).restype = ctypes.c_int
        _check(lib, lib.cuInit(0), "cuInit")
        _lib = lib
    return _lib


def _check(lib, code, what):
    if code != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorString(code, ctypes.byref(text))
        raise CudaShmError("%s failed: CUDA error %d (%s)" % (
            what, code, text.value.decode() if text.value else "unknown"))


def _prop(device):
    prop = _AllocProp()
    prop.type = _CU_MEM_ALLOCATION_TYPE_PINNED
    prop.requestedHandleTypes = _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    prop.location.type = _CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = device
    return prop


def granularity(device=0):
    lib = _cuda()
    g = ctypes.c_size_t()
    _check(lib, lib.cuMemGetAllocationGranularity(ctypes.byref(g), ctypes.byref(_prop(device)),
                                                  _CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
           "cuMemGetAllocationGranularity")
    return g.value


class _CudaArray:
    """Just enough of __cuda_array_interface__ for torch.as_tensor to wrap a raw pointer."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 2, "strides": None}


class Arena:
    """One VMM allocation mapped into this process. The creator holds the exportable handle."""

    def __init__(self, nbytes=0, device=0, _handle=None, _size=0):
        lib = _cuda()
        self.device = device
        self._lib = lib
        self._mapped = False
        if _handle is None:
            g = granularity(device)
            size = max(g, (int(nbytes) + g - 1) // g * g)
            handle = ctypes.c_ulonglong()
            _check(lib, lib.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size),
                                        ctypes.byref(_prop(device)), ctypes.c_ulonglong(0)), "cuMemCreate")
        else:
            handle, size = _handle, _size
        self.handle, self.size = handle, size
        ptr = ctypes.c_ulonglong()
        _check(lib, lib.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                            ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)),
               "cuMemAddressReserve")
        self.ptr = ptr.value
        _check(lib, lib.cuMemMap(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                 handle, ctypes.c_ulonglong(0)), "cuMemMap")
        self._mapped = True
        access = _AccessDesc()
        access.location.type = _CU_MEM_LOCATION_TYPE_DEVICE
        access.location.id = device
        access.flags = _CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        _check(lib, lib.cuMemSetAccess(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(size),
                                       ctypes.byref(access), ctypes.c_size_t(1)), "cuMemSetAccess")
        self._bytes = None

    def export_fd(self):
        """A new file descriptor for this allocation (inheritable; the caller closes it)."""
        fd = ctypes.c_int(-1)
        _check(self._lib, self._lib.cuMemExportToShareableHandle(
            ctypes.byref(fd), self.handle, _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            ctypes.c_ulonglong(0)), "cuMemExportToShareableHandle")
        os.set_inheritable(fd.value, True)
        return fd.value

    @classmethod
    def attach(cls, fd, size, device=0):
        lib = _cuda()
        handle = ctypes.c_ulonglong()
        try:
            _check(lib, lib.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(int(fd)),
                                                           _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                   "cuMemImportFromShareableHandle")
        finally:
            os.close(fd)            # the imported handle holds the memory; the descriptor is done
        return cls(device=device, _handle=handle, _size=int(size))

    def bytes(self):
        """The whole arena as a uint8 CUDA tensor (torch's context must be initialised first)."""
        if self._bytes is None:
            import torch
            self._bytes = torch.as_tensor(_CudaArray(self.ptr, self.size), device="cuda:%d" % self.device)
        return self._bytes

    def tensor(self, offset, shape, dtype):
        from .arenaview import view
        return view(self.bytes(), self.size, offset, shape, dtype)

    def close(self):
        if not self._mapped:
            return
        self._bytes = None
        self._lib.cuMemUnmap(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(self.size))
        self._lib.cuMemAddressFree(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(self.size))
        self._lib.cuMemRelease(self.handle)
        self._mapped = False
