"""The runner: the only code that runs beside candidate kernels, in the sandbox (see sandbox.py).

It imports kernel.py (or, for the reference runner, the op's reference) and calls kernel_fn on
inputs the judge placed in shared memory, copying each output into the shared region the judge
named. Nothing here is trusted by the judge: a kernel can rewrite any of it. The checks done here
(torch patches, global switches, poisoned allocations, aliasing, returned-object reuse, deferred
work) are the contract's, and catch honest mistakes early with a precise message; the verdict on
correctness and every clock belong to the judge, in another process.

Modes (argv: mode, socket fd, device):
  serve   answer one judge connection until it closes (the reference runner);
  zygote  import torch once, then fork a fresh runner per candidate on request, so a candidate
          never inherits another's state and does not pay torch's import.
"""

import os
import signal
import sys
import threading
import time
import traceback


def _one_line(exc):
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0]) if text else type(exc).__name__


class State:
    def __init__(self, device):
        self.device = device
        self.arena = None
        self.fns = {}              # "main": kernel_fn or the reference; "null": no work
        self.bound = {}             # id -> (input views, out offset, out capacity)
        self.prev = None            # (object returned by the previous checked call, its snapshot)
        self.arg_names = None
        self.graphs = {}            # (fn, slot ids) -> CUDA graph of a timing round
        self.graph_outs = {}
        self.golden_ready = False
        self.held = []              # a "hold" round's outputs, alive until the next such round
        self.heap = None            # CUDA: heap.Heap over GPU memory the judge reads (the candidate's)
        self.graph_keep = {}        # (fn, slot ids) -> the captured round's outputs, kept alive
        self.keep_only = False      # this round's held outputs are never read (the reference's, the null's)


def _sync(device):
    if device == "cuda":
        import torch
        torch.cuda.synchronize()


def _dtype(name):
    import torch
    return getattr(torch, name)


def _load_kernel(state, path):
    from . import integrity, loader
    integrity.capture()
    state.golden_ready = True
    module = loader.load_module(path)
    problems = integrity.check(restore=True)
    if problems:
        return {"ok": False, "error": "integrity: importing the kernel " + "; ".join(problems[:5]),
                "cheat": True}
    state.fns["main"] = module.kernel_fn
    return {"ok": True}


def _load_reference(state, op_type, attrs=None):
    from .. import ops
    spec = ops.get(op_type).bind(attrs or {})     # the folder's contract attributes (bench.py)
    state.fns["main"] = spec.reference
    return {"ok": True}


def _load_null(state, shape, dtype):
    """A kernel that does no work: its rounds measure what every call costs besides the kernel."""
    import torch
    fixed = torch.zeros(tuple(shape), dtype=_dtype(dtype), device=state.device)
    state.fns["null"] = lambda *inputs: fixed
    return {"ok": True}


def _bind(state, msg):
    views = []
    for offset, shape, dtype in msg["inputs"]:
        views.append(state.arena.tensor(int(offset), [int(s) for s in shape], _dtype(dtype)))
    state.bound[int(msg["id"])] = (tuple(views), int(msg["out"][0]), int(msg["out"][1]))
    return {"ok": True}


def _describe(state, out):
    """(what was returned, whether its bytes may be taken): a plain tensor on this device only."""
    import torch
    if not isinstance(out, torch.Tensor):
        return {"type": type(out).__name__, "copied": False}, False
    desc = {"type": "Tensor", "shape": list(out.shape), "dtype": str(out.dtype).replace("torch.", ""),
            "device": out.device.type, "copied": False}
    if type(out) is not torch.Tensor:
        desc["type"] = type(out).__name__        # a subclass: its methods could answer for it
        return desc, False
    return desc, out.device.type == state.device


def _place(state, out, offset, capacity):
    """Copy the output into the judge's region; describe what was returned."""
    import torch
    desc, usable = _describe(state, out)
    if not usable or out.numel() * out.element_size() > capacity:
        return desc
    dst = state.arena.tensor(offset, list(out.shape), out.dtype)
    with torch.no_grad():
        dst.copy_(out.detach())
    desc["copied"] = True
    return desc


def _hold(state, out, offset, capacity):
    """Keep the output where the kernel put it and say where, so that no side's clock holds a copy
    into the judge's region, a copy a kernel could skip by writing there itself
    (cheaters/direct_output.py in tests/agent/harness). On the CPU the judge reads it from this
    stopped process (process_vm_readv); on CUDA from the heap (heap.py), GPU memory the judge maps
    too: an output outside the heap (or with no heap) is copied into the judge's region instead,
    inside the clock (the kernel's own cost). The reference and the null kernel, never read while
    timed, only keep theirs (hold "keep"). A non-contiguous output is made contiguous here, inside the
    clock: the kernel's own cost."""
    desc, usable = _describe(state, out)
    if not usable:
        return desc
    t = out.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    nbytes = t.numel() * t.element_size()
    if state.device == "cuda" and not state.keep_only and (state.heap is None or not state.heap.holds(t)):
        return _place(state, t, offset, capacity)
    state.held.append(t)
    desc.update(held=True, nbytes=nbytes)
    if state.device == "cpu":
        desc["ptr"] = t.data_ptr()
    elif state.heap is not None:
        desc["offset"] = state.heap.offset(t)
    return desc


def _attach_heap(state, fd, size):
    """The judge's GPU memory for this candidate's timed outputs (see heap.py)."""
    from ..ipc import cudashm, heap
    if state.heap is not None:
        return {"ok": False, "error": "a heap is attached already"}
    try:
        if not heap.supported():
            os.close(fd)
            return {"ok": False, "error": "this torch has no MemPool with a custom allocator"}
        import torch
        torch.cuda.init()
        state.heap = heap.Heap(cudashm.Arena.attach(fd, int(size)))
    except Exception as exc:  # noqa: BLE001 - the kernel then copies its outputs, at its own cost
        state.heap = None
        return {"ok": False, "error": _one_line(exc)}
    return {"ok": True}


def _pool(state, hold):
    """Where a timed round's allocations go: the heap when its outputs are held there."""
    import contextlib
    return state.heap.use() if hold and state.heap is not None else contextlib.nullcontext()


def _contract_checks(state, inputs, out, pristine, threads_before):
    """The checked calls' contract (the judge decides correctness on the bytes)."""
    import torch
    from ..ipc.bits import bit_equal, overlaps
    if not isinstance(out, torch.Tensor):
        return None, None
    snap = out.detach().clone()
    _sync(state.device)
    deadline = time.perf_counter() + 0.5
    for t in threading.enumerate():
        if t not in threads_before and t.is_alive():
            t.join(max(0.0, deadline - time.perf_counter()))
    if not bit_equal(snap, out):
        return snap, ("the output changed after kernel_fn returned: work was deferred to another "
                      "thread or stream (results must be complete at return)")
    names = state.arg_names or ["#%d" % (k + 1) for k in range(len(inputs))]
    for name, now, before in zip(names, inputs, pristine):
        if not bit_equal(now, before):
            return snap, "kernel_fn modified its input `%s` (inputs must stay unchanged)" % name
    for name, now in zip(names, inputs):
        if overlaps(out, now):
            return snap, "the output shares memory with input `%s` (return a new tensor)" % name
    if state.prev is not None:
        prev_out, prev_snap = state.prev
        if prev_out is out:
            return snap, ("kernel_fn returned the same tensor object as on its previous call (results "
                          "reused: each call must return a fresh output)")
        if not bit_equal(prev_out, prev_snap):
            return snap, ("kernel_fn overwrote the tensor it returned on an earlier call (each call "
                          "must return a fresh output)")
    state.prev = (out, snap)
    return snap, None


def _peak(state, msg):
    """Peak device memory of one call on a bound slot, as this process's allocator saw it."""
    import torch
    if state.device != "cuda":
        return {"ok": True, "peak_mb": None}
    inputs, _, _ = state.bound[int(msg["id"])]
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        state.fns["main"](*inputs)
    torch.cuda.synchronize()
    own = sum(t.numel() * t.element_size() for t in inputs)
    return {"ok": True, "peak_mb": (torch.cuda.max_memory_allocated() - base + own) / 2 ** 20}


def _graph(state, msg):
    """Captures the round's calls (kernel_fn, then, unless outputs are held, the copy into the
    judge's region) into a CUDA graph and keeps it: replaying it runs the same GPU work with no
    Python in between, so a round's time is the GPU's, not the launch overhead's (what do_bench's L2
    flush hides by keeping the GPU busy). Inputs are read where the judge writes fresh data before
    every round. Held outputs stay alive with the graph, each at its own address, in the heap when
    there is one (captured into its pool)."""
    import torch
    key = (msg.get("fn", "main"), tuple(int(b) for b in msg["ids"]))
    fn = state.fns[key[0]]
    hold = _hold_mode(state, msg)
    first = _run(state, dict(msg, graph=False))         # eager: compiles, and the outputs' shapes
    if not first.get("ok"):
        return first

    def body():
        state.held, descs = [], []               # _hold keeps each held output in state.held
        for bid, desc in zip(key[1], first["outs"]):
            inputs, offset, capacity = state.bound[bid]
            out = fn(*inputs)
            if hold:
                desc = _hold(state, out, offset, capacity)
            elif desc.get("copied"):
                state.arena.tensor(offset, list(out.shape), out.dtype).copy_(out)
            descs.append(desc)
        return state.held, descs

    def capture(pool):
        with torch.no_grad():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side), _pool(state, pool is not None):
                body()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool):
                kept, descs = body()
        torch.cuda.synchronize()
        return graph, kept, descs

    pool = state.heap.pool.id if hold and state.heap is not None else None
    state.held = []
    try:
        try:
            graph, kept, descs = capture(pool)
        except BaseException:  # noqa: BLE001 - no capture into the heap's pool: outputs copied, at the kernel's cost
            if pool is None:
                raise
            torch.cuda.synchronize()
            graph, kept, descs = capture(None)
    except BaseException as exc:  # noqa: BLE001 - not capturable: the judge times eager rounds
        torch.cuda.synchronize()
        state.graphs.pop(key, None)
        return dict(first, graph=False, why=_one_line(exc))
    state.held = []
    state.graphs[key] = graph
    state.graph_keep[key] = kept
    state.graph_outs[key] = descs
    return dict(first, outs=descs, graph=True)


def _replay(state, msg):
    import torch
    graph = state.graphs.get((msg.get("fn", "main"), tuple(int(b) for b in msg["ids"])))
    if graph is None:
        return {"ok": False, "error": "no captured round for these slots"}
    try:
        graph.replay()
        torch.cuda.synchronize()
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": _one_line(exc), "fatal": True}
    return {"ok": True, "outs": state.graph_outs.get((msg.get("fn", "main"), tuple(int(b) for b in msg["ids"])), [])}


def _hold_mode(state, msg):
    """Whether a round's outputs stay where the kernel put them (timed rounds; never checked calls)."""
    state.keep_only = msg.get("hold") == "keep"
    return bool(msg.get("hold")) and not msg.get("checked")


def _run(state, msg):
    import torch
    from . import guards, integrity
    for b in msg.get("bind") or ():
        _bind(state, b)
    if msg.get("graph") and state.device == "cuda":
        return _graph(state, msg)
    if msg.get("replay"):
        return _replay(state, msg)
    checked = bool(msg.get("checked"))
    hold = _hold_mode(state, msg)
    fn = state.fns[msg.get("fn", "main")]
    outs = []
    if hold:
        state.held = []
    with torch.no_grad(), _pool(state, hold):
        for index, bid in enumerate(msg["ids"]):
            inputs, offset, capacity = state.bound[int(bid)]
            try:
                if checked:
                    pristine = [t.clone() for t in inputs]
                    threads_before = set(threading.enumerate())
                    _sync(state.device)
                    with guards.poisoned_allocations(state.device, capacity):
                        out = fn(*inputs)
                    snap, fault = _contract_checks(state, inputs, out, pristine, threads_before)
                    desc = _place(state, snap if snap is not None else out, offset, capacity)
                    if fault is None and state.golden_ready:
                        problems = integrity.check(restore=True)
                        if problems:
                            fault = "integrity: " + "; ".join(problems[:5])
                    if fault:
                        desc["fault"] = fault
                else:
                    out = fn(*inputs)
                    desc = _hold(state, out, offset, capacity) if hold else _place(state, out, offset, capacity)
            except BaseException as exc:  # noqa: BLE001 - SystemExit in a kernel is the kernel's failure
                return {"ok": False, "index": index, "error": _one_line(exc),
                        "fatal": guards.is_fatal(exc), "traceback": traceback.format_exc()[-4000:]}
            outs.append(desc)
    try:
        _sync(state.device)
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "index": len(outs) - 1, "error": _one_line(exc), "fatal": True}
    return {"ok": True, "outs": outs}


def serve(conn, device):
    from ..ipc import shm
    state = State(device)
    spin = 0.0
    while True:
        try:
            msg, fds = conn.recv(spin=spin)
        except Exception:  # noqa: BLE001 - the judge went away
            return
        op = msg.get("op")
        # A ping may announce a timed request: wait for it awake (see wire.Connection.recv).
        spin = min(float(msg.get("spin") or 0.0), 0.1) if op == "ping" else 0.0
        try:
            if op == "attach" and msg.get("role") == "heap":
                reply = _attach_heap(state, fds[0], msg["size"])
            elif op == "attach":
                if state.arena is not None:
                    state.arena.close()
                state.bound.clear()
                state.arena = shm.attach(device, fds[0], int(msg["size"]))
                reply = {"ok": True}
            elif op == "load":
                state.arg_names = [str(a) for a in msg.get("args") or []]
                if msg.get("source_b64"):       # the judge's bytes, into this process's own scratch
                    import base64
                    with open(msg["path"], "wb") as f:
                        f.write(base64.b64decode(msg["source_b64"]))
                reply = _load_kernel(state, msg["path"])
            elif op == "reference":
                reply = _load_reference(state, msg["op_type"], msg.get("attrs"))
            elif op == "null":
                reply = _load_null(state, msg["shape"], msg["dtype"])
            elif op == "bind":
                reply = _bind(state, msg)
            elif op == "run":
                reply = _run(state, msg)
            elif op == "peak":
                reply = _peak(state, msg)
            elif op == "release":
                state.bound.clear()
                state.prev = None
                if state.arena is not None:
                    state.arena.close()
                    state.arena = None
                reply = {"ok": True}
            elif op == "ping":
                reply = {"ok": True}
            elif op == "exit":
                conn.send({"ok": True})
                return
            else:
                reply = {"ok": False, "error": "unknown op %r" % op}
        except BaseException as exc:  # noqa: BLE001 - a kernel's import may raise anything, SystemExit too
            from .loader import KernelFileError
            reply = {"ok": False, "error": str(exc) if isinstance(exc, KernelFileError) else _one_line(exc),
                     "traceback": traceback.format_exc()[-4000:]}
        try:
            conn.send(reply)
        except Exception:  # noqa: BLE001 - e.g. NaN in a reply: report, do not die
            conn.send({"ok": False, "error": "reply could not be encoded"})


def _set_dumpable():
    import ctypes
    try:
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)         # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass


def _prepare_candidate(cwd):
    os.makedirs(cwd, exist_ok=True)
    for d in ("home", "tmp", "cache", "triton", "inductor"):
        os.makedirs(os.path.join(cwd, d), exist_ok=True)
    os.chdir(cwd)
    os.environ.update({"HOME": os.path.join(cwd, "home"), "TMPDIR": os.path.join(cwd, "tmp"),
                       "XDG_CACHE_HOME": os.path.join(cwd, "cache"),
                       "TRITON_CACHE_DIR": os.path.join(cwd, "triton"),
                       "TORCHINDUCTOR_CACHE_DIR": os.path.join(cwd, "inductor")})
    log = os.open(os.path.join(cwd, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass


def _triton_driver_seed(cwd):
    """Triton's driver utilities (a C module Triton compiles on first use, 0.3 s of gcc on the H200)
    as {relative path: bytes}, built by a child of the zygote before any candidate exists and kept
    in the zygote's memory, out of every candidate's reach. Each candidate's fresh, empty Triton
    cache gets a copy: nothing a candidate writes reaches the next one. {} where Triton or CUDA is
    not there (the kernel that needs them reports it)."""
    try:
        import triton  # noqa: F401
    except Exception:  # noqa: BLE001
        return {}
    cache = os.path.join(cwd, "triton-seed")
    pid = os.fork()
    if pid == 0:
        try:
            os.makedirs(cache, exist_ok=True)
            os.environ["TRITON_CACHE_DIR"] = cache
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            from triton.runtime import driver
            driver.active.utils      # builds (or loads) the module in the cache
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    seed = {}
    for top, _, files in os.walk(cache):
        for name in files:
            path = os.path.join(top, name)
            with open(path, "rb") as f:
                seed[os.path.relpath(path, cache)] = f.read()
    import shutil
    shutil.rmtree(cache, ignore_errors=True)
    return seed


def _plant_seed(seed, cwd):
    for rel, data in seed.items():
        path = os.path.join(cwd, "triton", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def _warm_cuda():
    """The CUDA context, Triton's driver and a first Triton launch (warmup.py): the judge's own code,
    before the candidate's exists (a failure shows when the kernel runs). A spare runner does this
    between benches (remote.Candidate), a fresh one while the judge writes the source."""
    try:
        import torch
        torch.cuda.init()
        torch.empty(1, device="cuda")       # the context itself is made on first use
        from triton.runtime import driver
        driver.active.utils
        from . import warmup
        warmup.run()
        torch.cuda.reset_peak_memory_stats()
    except Exception:  # noqa: BLE001
        pass


def _clean_ipc():
    """Removes every System V shared memory segment, message queue and semaphore set of this
    sandbox's IPC namespace (the judge asks between candidates: the namespace outlives them, and a
    segment left by one kernel would reach the next). Returns how many went."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    removed = 0
    for kind, rm in (("shm", lambda i: libc.shmctl(i, 0, None)), ("msg", lambda i: libc.msgctl(i, 0, None)),
                     ("sem", lambda i: libc.semctl(i, 0, 0))):
        try:
            with open("/proc/sysvipc/" + kind) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            try:
                removed += rm(int(row.split()[1])) == 0
            except (IndexError, ValueError):
                pass
    return removed


def zygote(conn, device):
    import socket
    from . import guards, integrity, loader  # noqa: F401 - in memory before any fork
    from .. import ops  # noqa: F401 - in memory before any fork
    from ..ipc import bits, shm, wire  # noqa: F401 - in memory before any fork
    seed = {}
    if device == "cuda":
        from ..ipc import cudashm  # noqa: F401
        seed = _triton_driver_seed(os.getcwd())
    from ..isolation.sandbox import make_undumpable
    make_undumpable()       # a candidate (same user) may not ptrace the zygote or read its memory
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)     # candidates are reaped by the kernel
    while True:
        try:
            msg, fds = conn.recv()
        except Exception:  # noqa: BLE001
            return
        if msg.get("op") == "clean_ipc" and not fds:
            conn.send({"ok": True, "removed": _clean_ipc()})
            continue
        if msg.get("op") != "fork" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            conn.send({"ok": False, "error": "zygote: expected fork with one socket"})
            continue
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _set_dumpable()     # its own /proc/self stays readable to it (libraries read it)
                conn.close()
                _prepare_candidate(msg["cwd"])
                _plant_seed(seed, msg["cwd"])
                if device == "cuda":
                    _warm_cuda()
                serve(wire.Connection(socket.socket(fileno=fds[0])), device)
            finally:
                os._exit(0)
        os.close(fds[0])
        conn.send({"ok": True, "pid": pid})


def main():
    import socket
    from ..ipc import wire
    mode, fd, device = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    conn = wire.Connection(socket.socket(fileno=fd))
    try:
        import torch  # noqa: F401 - before any fork: the candidates start with torch imported
        if device == "cuda" and mode == "zygote":
            try:
                import triton  # noqa: F401
            except Exception:  # noqa: BLE001 - a kernel that needs it reports the import error
                pass
        if device == "cuda" and mode in ("serve", "model"):
            torch.cuda.init()
    except BaseException as exc:  # noqa: BLE001
        conn.send({"ok": False, "error": "cannot import torch in %s: %s" % (sys.executable, _one_line(exc))})
        return 1
    conn.send({"ok": True, "pid": os.getpid(), "python": sys.executable, "torch": torch.__version__})
    if len(sys.argv) > 5:
        # A caller's own server, named by the caller ("modelplug.child:serve", verify's model runner): the
        # judge imports nothing of the layers that use it.
        import importlib
        module, _, function = sys.argv[5].partition(":")
        getattr(importlib.import_module(module), function)(conn, device)
    else:
        (zygote if mode == "zygote" else serve)(conn, device)
    return 0
