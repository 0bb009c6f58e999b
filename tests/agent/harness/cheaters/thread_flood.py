"""Tasks past the limit: starts up to 600 threads (small stacks, so the address-space limit does not
stop them) and reports in its import error how many started. The test runs it under a pids limit."""
import threading

KERNEL_TYPE = "softmax"

threading.stack_size(256 << 10)
_stop = threading.Event()
_started = 0
for _ in range(600):
    try:
        threading.Thread(target=_stop.wait, daemon=True).start()
    except RuntimeError:
        break
    _started += 1
raise RuntimeError("thread_flood started %d threads" % _started)


def kernel_fn(x):
    return x
