"""Files: writes up to 600 MiB into its scratch directory and reports in its import error how much
it could. The test runs it with a small scratch cap."""

KERNEL_TYPE = "softmax"
_written = 0
_chunk = b"\0" * (4 << 20)
try:
    with open("fill.bin", "wb") as _f:
        while _written < (600 << 20):
            _f.write(_chunk)
            _f.flush()
            _written += len(_chunk)
except OSError:
    pass
raise RuntimeError("fill_scratch wrote %d MiB" % (_written >> 20))


def kernel_fn(x):
    return x
