"""The judge's way of calling a kernel that lives in another process: inputs are written into the
shared arena, the runner is asked to call kernel_fn on them, and the output is rebuilt here as a plain
torch.Tensor from the bytes the runner copied back. What the runner says about the output (shape,
dtype, type) is used for error messages only; the verdict is taken on the bytes.
"""

from ..contract.dtypes import dtype_name
from ..ipc import procmem
from ..ipc.bits import bit_equal
from ..ipc.shm import aligned
from .pool import RunnerFailure


class KernelFault(Exception):
    """kernel_fn misbehaved in a way that is not a numerical mismatch (reason in str)."""


class KernelRaised(Exception):
    """kernel_fn raised; str is 'Type: first line'."""

    def __init__(self, text, fatal=False):
        super().__init__(text)
        self.fatal = fatal


def layout(base, tensors, out_nbytes):
    """[(offset, shape, dtype name)] for the inputs from `base`, then the output region."""
    specs, at = [], aligned(base)
    for t in tensors:
        specs.append((at, list(t.shape), str(t.dtype).replace("torch.", "")))
        at = aligned(at + t.numel() * t.element_size())
    out = (at, max(1, int(out_nbytes)))
    return specs, out, aligned(at + out[1])


def region_bytes(tensors, out_nbytes):
    return layout(0, tensors, out_nbytes)[2]


def write(arena, specs, tensors):
    for (offset, shape, _), t in zip(specs, tensors):
        arena.tensor(offset, shape, t.dtype).copy_(t)


def describe_mismatch(desc, shape, dtype, device):
    """Why the runner's output cannot be the expected tensor, or None."""
    if desc.get("type") != "Tensor":
        return "kernel_fn returned %s, expected a plain torch.Tensor" % desc.get("type", "nothing")
    if list(desc.get("shape") or []) != list(shape):
        return "output shape %s, expected %s" % (desc.get("shape"), list(shape))
    if desc.get("dtype") != dtype_name(dtype):
        return "output dtype %s, expected %s" % (desc.get("dtype"), dtype_name(dtype))
    if desc.get("device") != device:
        return "output on %s, expected %s" % (desc.get("device"), device)
    if not desc.get("copied") and not desc.get("held"):
        return "the output could not be read back"
    return None


def read_output(reply, index, arena, out_region, shape, dtype, device, into=None, pid=None, heap=None):
    """The index-th output of a run reply as a plain tensor (a copy, into `into` when given: a
    fresh allocation faults its pages in, 50 ms for 16 MB on a VM), or raise KernelFault."""
    desc = output_desc(reply, index, shape, dtype, device)
    if desc.get("held") and device == "cpu":
        return read_held(desc, pid, shape, dtype, into)
    out = output_view(desc, arena, out_region, heap, shape, dtype)
    return into.copy_(out) if into is not None else out.clone()


def output_desc(reply, index, shape, dtype, device):
    """The runner's description of its index-th output, or raise what was wrong with it."""
    if not reply.get("ok"):
        raise KernelRaised(str(reply.get("error") or "kernel_fn failed"), bool(reply.get("fatal")))
    outs = reply.get("outs")
    if not isinstance(outs, list) or index >= len(outs) or not isinstance(outs[index], dict):
        raise KernelFault("the kernel's process returned no description of its output")
    desc = outs[index]
    if desc.get("fault"):
        raise KernelFault(str(desc["fault"]))
    problem = describe_mismatch(desc, shape, dtype, device)
    if problem:
        raise KernelFault(problem)
    return desc


def output_view(desc, arena, out_region, heap, shape, dtype):
    """The judge's own view of the bytes a (GPU or copied) output is in: the region it named, or,
    for an output held on CUDA, the place in the heap (heap.py) the kernel's process names. The
    offset is the process's word; the bytes there are what is checked."""
    if not desc.get("held"):
        return arena.tensor(out_region[0], shape, dtype)
    import math
    import torch
    offset, itemsize = desc.get("offset"), torch.empty((), dtype=dtype).element_size()
    nbytes = itemsize * math.prod(shape)
    if heap is None or not isinstance(offset, int) or desc.get("nbytes") != nbytes or offset < 0 \
            or offset % itemsize or offset + nbytes > heap.size:
        raise KernelFault("the kernel's process described an output that cannot be read (%s bytes at "
                          "heap offset %s)" % (desc.get("nbytes"), offset))
    return heap.tensor(offset, shape, dtype)


def read_held(desc, pid, shape, dtype, into=None):
    """An output the kernel's process kept (runner._hold), read from that process while it is
    stopped. Its address is the process's word; the bytes there are what is checked."""
    import torch
    dst = into if into is not None else torch.empty(shape, dtype=dtype)
    nbytes = dst.numel() * dst.element_size()
    if pid is None or desc.get("nbytes") != nbytes or not isinstance(desc.get("ptr"), int):
        raise KernelFault("the kernel's process described an output that cannot be read (%s bytes at %s)"
                          % (desc.get("nbytes"), desc.get("ptr")))
    if nbytes and procmem.read(pid, desc["ptr"], dst.data_ptr(), nbytes) != nbytes:
        raise KernelFault("the kernel's output could not be read from its process at the address it gave")
    return dst


class RemoteCaller:
    """Runs correctness cases through a candidate runner; same role as the old in-process guard."""

    def __init__(self, runner, arena, device, arg_names):
        self.runner, self.arena, self.device, self.arg_names = runner, arena, device, arg_names
        self.calls = 0

    def __call__(self, case):
        specs, out, _ = layout(0, case.inputs, case.out_nbytes())
        write(self.arena, specs, case.inputs)
        if self.device == "cuda":
            import torch
            torch.cuda.synchronize()
        bind = {"id": 0, "inputs": specs, "out": list(out)}
        reply = self.runner.request({"op": "run", "ids": [0], "checked": True, "bind": [bind]})
        self.calls += 1
        result = read_output(reply, 0, self.arena, out, list(case.truth.shape), case.torch_dtype, self.device)
        for name, (offset, shape, _), original in zip(self.arg_names, specs, case.inputs):
            if not bit_equal(self.arena.tensor(offset, shape, original.dtype), original):
                raise KernelFault("kernel_fn modified its input `%s` (inputs must stay unchanged)" % name)
        return result


__all__ = ["KernelFault", "KernelRaised", "RemoteCaller", "RunnerFailure", "layout", "output_desc",
           "output_view", "region_bytes", "read_output", "write"]
