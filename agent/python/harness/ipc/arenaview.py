"""The layout of an arena's bytes, shared by the CPU arena (shm.py) and the CUDA one (cudashm.py):
the alignment of every region and a zero-copy tensor view over a region."""

ALIGN = 256


def aligned(n):
    return (int(n) + ALIGN - 1) // ALIGN * ALIGN


def view(raw, size, offset, shape, dtype):
    """A tensor of `shape` and `dtype` over the arena's bytes `raw` at `offset` (zero copy)."""
    import torch
    n = 1
    for s in shape:
        n *= int(s)
    nbytes = n * torch.empty((), dtype=dtype).element_size()
    if offset < 0 or offset + nbytes > size:
        raise ValueError("view [%d, %d) outside the arena of %d bytes" % (offset, offset + nbytes, size))
    return raw[offset:offset + nbytes].view(dtype).view(tuple(int(s) for s in shape))
