"""AutoKernel Studio worker: the protocol loop run by the user's Python interpreter.

Speaks line-delimited JSON on stdin/stdout (see docs/worker.md). This file imports no torch:
ops are modules loaded lazily, so `ping` answers in milliseconds and a broken torch install
only fails the ops that need it.

Only the worker writes to the protocol channel. At start-up file descriptor 1 is pointed at
stderr, so anything user code prints (Python print, C extensions, Triton, compilers) lands in
stderr, which the client keeps as free text for error reports.
"""

import faulthandler
import importlib
import json
import math
import os
import platform
import re
import sys
import time
import traceback

PROTOCOL = 1

# op -> "module:function"; each function is called as function(args, ctx).
OPS = {
    "bench": "harness.bench:handle",
    "extract": "harness.extract:handle",
    "describe": "harness.describe:handle",
    "profile": "akprofile:handle",
    "verify": "modelplug.verify:handle",
    "export": "modelplug.export:handle",
    "reproduce": "modelplug.reproduce:handle",
    "plugcheck": "modelplug.plugcheck:handle",
    "inmodel": "modelplug.inmodel:handle",
    "device": "akdevice:handle",
    "doctor": "akdoctor:handle",
    "roofs": "akroofs:handle",
    "judge_facts": "harness.facts:handle",
}

# Errors after which the CUDA context (and so this process) cannot be trusted again.
FATAL_PATTERNS = re.compile(
    r"illegal memory access|CUDA error|CUDA driver error|device-side assert|misaligned address"
    r"|unspecified launch failure|an illegal instruction was encountered|CUBLAS_STATUS_EXECUTION_FAILED"
    r"|cudaErrorLaunchFailure|HIP error|hipError|out of memory on device|CUDA_ERROR_",
    re.IGNORECASE,
)


class Channel:
    """The protocol channel: a private duplicate of the original stdout."""

    def __init__(self, fd):
        self._out = os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=1)

    def send(self, message):
        line = json.dumps(_clean(message), separators=(",", ":"), allow_nan=False, default=_to_json)
        self._out.write(line + "\n")
        self._out.flush()


class Context:
    """What a handler gets besides its args: progress reporting and where the worker's files are."""

    def __init__(self, channel, request_id, op):
        self._channel = channel
        self.id = request_id
        self.op = op
        self.worker_dir = os.path.dirname(os.path.abspath(__file__))
        self.fatal = False  # a handler that caught a CUDA fault itself sets this (or mark_fatal)
        self.fatal_reason = ""

    def progress(self, message, fraction=None):
        event = {"id": self.id, "event": "progress", "message": str(message)}
        if fraction is not None:
            event["fraction"] = max(0.0, min(1.0, float(fraction)))
        self._channel.send(event)

    def mark_fatal(self, reason=""):
        self.fatal = True
        self.fatal_reason = str(reason)

    def log(self, message):
        print(message, file=sys.stderr, flush=True)


def _to_json(value):
    # numpy / torch scalars and arrays, sets, paths: whatever has an obvious JSON form.
    for attr in ("item", "tolist"):
        fn = getattr(value, attr, None)
        if callable(fn):
            try:
                return fn()
            except Exception:  # noqa: BLE001 - fall through to the next conversion
                pass
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError("value of type %s is not JSON-serialisable" % type(value).__name__)


def _clean(value):
    """JSON has no NaN or Infinity: they become null (the C++ side reads null as 'not measured')."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    converted = _to_json(value)
    return _clean(converted) if converted is not value else converted


def _is_fatal(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return bool(FATAL_PATTERNS.search(text))


def _one_line(exc):
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return "%s: %s" % (type(exc).__name__, first) if first else type(exc).__name__


# --- built-in and test-only ops ---------------------------------------------------------------

def _ping(args, ctx):
    return {
        "pong": True,
        "pid": os.getpid(),
        "python": sys.executable,
        "version": platform.python_version(),
        "protocol": PROTOCOL,
        "ops": sorted(list(OPS) + ["ping"] + (sorted(_TEST_OPS) if _test_mode() else [])),
        "worker_dir": ctx.worker_dir,
    }


def _debug_sleep(args, ctx):
    seconds = float(args.get("seconds", 3600))
    ctx.log("debug.sleep: sleeping %g s" % seconds)
    ctx.progress("sleeping", 0.0)
    time.sleep(seconds)
    return {"slept": seconds}


def _debug_crash(args, ctx):
    sys.stderr.write("debug.crash: aborting\n")
    sys.stderr.flush()
    os.abort()


def _debug_echo(args, ctx):
    steps = int(args.get("progress", 0))
    for i in range(steps):
        ctx.progress("step %d" % (i + 1), (i + 1) / steps)
    if "print" in args:
        # Both Python-level and C-level writes to "stdout" must stay off the protocol channel.
        print(args["print"])
        os.write(1, (str(args["print"]) + " (fd 1)\n").encode())
    if "raise" in args:
        raise ValueError(str(args["raise"]))
    return {"echo": args}


def _debug_env(args, ctx):
    return {"names": sorted(os.environ)}


_TEST_OPS = {
    "debug.sleep": _debug_sleep,
    "debug.crash": _debug_crash,
    "debug.echo": _debug_echo,
    "debug.env": _debug_env,
}


def _test_mode():
    return os.environ.get("AK_WORKER_TEST") == "1"


def _resolve(op):
    if op == "ping":
        return _ping
    if _test_mode() and op in _TEST_OPS:
        return _TEST_OPS[op]
    target = OPS.get(op)
    if target is None:
        raise LookupError("unknown op '%s'" % op)
    module_name, _, function_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError("op '%s' is not available: cannot import %s (%s)" % (op, module_name, exc)) from exc
    return getattr(module, function_name)


def _handle(channel, request):
    request_id = request.get("id")
    op = request.get("op")
    args = request.get("args") or {}
    ctx = Context(channel, request_id, op)
    if not isinstance(op, str) or not isinstance(args, dict):
        return {"id": request_id, "ok": False, "error": "invalid request: needs a string 'op' and an object 'args'",
                "traceback": ""}
    try:
        result = _resolve(op)(args, ctx)
        if result is None:
            result = {}
        # Serialise here so that a result JSON cannot hold becomes an error reply, not a dead worker.
        json.dumps(_clean(result), allow_nan=False, default=_to_json)
        reply = {"id": request_id, "ok": True, "result": result}
        if ctx.fatal or (isinstance(result, dict) and result.get("fatal") is True):
            reply["fatal"] = True
            if ctx.fatal_reason:
                reply["fatal_reason"] = ctx.fatal_reason
        return reply
    except BaseException as exc:  # noqa: BLE001 - every failure, sys.exit() in user code too, is a reply
        reply = {"id": request_id, "ok": False, "error": _one_line(exc), "traceback": traceback.format_exc()}
        if ctx.fatal or _is_fatal(exc):
            reply["fatal"] = True
        return reply


def main():
    faulthandler.enable(file=sys.__stderr__)
    # Keep private copies of the protocol descriptors, then point fds 0 and 1 away from them so
    # user code can neither read our requests nor write into our replies.
    channel = Channel(os.dup(1))
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, "r")  # noqa: SIM115 - lives as long as the process

    worker_dir = os.path.dirname(os.path.abspath(__file__))
    if worker_dir not in sys.path:
        sys.path.insert(0, worker_dir)

    channel.send({"event": "ready", "pid": os.getpid(), "python": sys.executable,
                  "version": platform.python_version(), "protocol": PROTOCOL})
    reader = _lines(requests)
    for raw in reader:
        raw = raw.strip()
        if not raw:
            continue
        try:
            request = json.loads(raw)
            if not isinstance(request, dict):
                raise ValueError("a request must be a JSON object")
        except ValueError as exc:
            channel.send({"id": None, "ok": False, "error": "invalid request line: %s" % exc, "traceback": ""})
            continue
        reply = _handle(channel, request)
        channel.send(reply)
        if reply.get("fatal"):
            # The CUDA context is poisoned: leave, the client starts a fresh worker.
            sys.stderr.flush()
            os._exit(3)
    return 0


def _lines(stream):
    buffer = b""
    while True:
        chunk = stream.read(65536)
        if not chunk:
            if buffer:
                yield buffer.decode("utf-8", errors="replace")
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode("utf-8", errors="replace")


if __name__ == "__main__":
    sys.exit(main())
