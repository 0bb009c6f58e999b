"""The judge's side of the runners: one reference runner and one candidate zygote per device, each in
its own sandbox, started on first use and kept warm across benches; one fresh candidate process per
bench, forked by the zygote and killed (with everything it started) when the bench ends.
"""

import atexit
import os
import tempfile
import time

from . import sandbox, wire

_sandboxes = {}                 # (device, role) -> Sandbox


class RunnerFailure(Exception):
    """A runner died, hung or spoke garbage. kind: crash | timeout | protocol."""

    def __init__(self, message, kind="crash"):
        super().__init__(message)
        self.kind = kind


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self, cap=None):
        left = max(0.05, self.end - time.monotonic())
        return min(left, cap) if cap else left

    def expired(self):
        return time.monotonic() >= self.end


class Runner:
    """One connection to a runner process."""

    def __init__(self, conn, label, deadline, describe_exit=lambda: ""):
        self.conn, self.label, self.deadline = conn, label, deadline
        self._describe_exit = describe_exit
        self.last_seconds = 0.0

    def request(self, message, fds=(), cap=None):
        t0 = time.perf_counter()
        try:
            self.conn.send(message, fds)
            reply, extra = self.conn.recv(self.deadline.left(cap))
        except (wire.WireError, OSError) as e:
            kind = getattr(e, "kind", "closed")
            if kind == "timeout":
                raise RunnerFailure("%s did not answer %r within %.0f s" % (
                    self.label, message.get("op"), self.deadline.left(cap)), "timeout")
            if kind == "closed":
                raise RunnerFailure("%s exited during %r%s" % (self.label, message.get("op"),
                                                               self._describe_exit()), "crash")
            raise RunnerFailure("%s broke the protocol: %s" % (self.label, e), "protocol")
        finally:
            self.last_seconds = time.perf_counter() - t0
        for fd in extra:
            os.close(fd)
        return reply


def _spawn(device, role, worker_dir):
    key = (device, role)
    sb = _sandboxes.get(key)
    if sb is not None and sb.alive():
        return sb
    if sb is not None:
        sb.stop()
    sb = sandbox.Sandbox(device, "zygote" if role == "candidate" else "serve", worker_dir)
    _sandboxes[key] = sb
    try:
        sb.spawn()
    except Exception:
        _sandboxes.pop(key, None)
        sb.stop()
        raise
    return sb


def _sandbox(device, role, worker_dir):
    sb = _spawn(device, role, worker_dir)
    try:
        sb.ready()
    except Exception:
        _sandboxes.pop((device, role), None)
        raise
    return sb


def prestart(device, worker_dir):
    """Starts whichever runner is missing, without waiting: both import torch at the same time."""
    for role in ("candidate", "reference"):
        try:
            _spawn(device, role, worker_dir)
        except Exception:  # noqa: BLE001 - reported when the runner is needed
            pass


def reference(device, worker_dir, deadline):
    sb = _sandbox(device, "reference", worker_dir)
    return Runner(sb.conn, "the reference runner", deadline), sb


class Candidate:
    """A fresh process for one kernel, forked inside the candidate sandbox."""

    def __init__(self, device, worker_dir, deadline):
        self.sb = _sandbox(device, "candidate", worker_dir)
        self.cwd = tempfile.mkdtemp(prefix="c-", dir=self.sb.root)
        judge_end, child = wire.pair()
        try:
            zr = Runner(self.sb.conn, "the candidate zygote", deadline)
            reply = zr.request({"op": "fork", "cwd": self.cwd}, fds=[child.fileno()], cap=30)
        finally:
            child.close()
        if not reply.get("ok"):
            raise RunnerFailure("the candidate zygote refused to fork: %s" % reply.get("error"), "protocol")
        self.ns_pid = int(reply["pid"])
        self.runner = Runner(judge_end, "the kernel's process", deadline, self._exit_text)

    def _exit_text(self):
        tail = self.output_tail(1500)
        return (": its output ends with:\n" + tail) if tail else ""

    def output_tail(self, limit=4000):
        return sandbox.file_tail(os.path.join(self.cwd, "output.log"), limit)

    def freeze(self):
        self.sb.freeze(spare=(self.sb.init_pid,))

    def thaw(self):
        self.sb.thaw(spare=(self.sb.init_pid,))

    def finish(self):
        """Kill the candidate and everything it started; wipe its files. Returns a note when the
        sandbox had to be restarted (a process would not die, or the zygote was hurt)."""
        note = ""
        self.runner.conn.close()
        if not self.sb.kill_except_leader():
            note = "a process of the kernel would not die: the candidate sandbox was restarted"
            self.sb.stop()
        elif not self.sb.alive():
            note = "the candidate sandbox died during the bench and was restarted"
            self.sb.stop()
        else:
            self.sb.wipe(self.cwd)
        return note


def isolation(device):
    """What the next candidate gets, without starting anything."""
    sb = _sandboxes.get((device, "candidate"))
    if sb is not None:
        return sb.describe()
    probe = sandbox.Sandbox.__new__(sandbox.Sandbox)
    probe.device, probe.memory_limit_mb = device, sandbox.default_memory_limit_mb()
    bwrap, why = sandbox.find_bwrap()
    ok, why2 = sandbox.probe(bwrap, device) if bwrap else (False, why)
    probe.kind, probe.weaker_because = ("bubblewrap", "") if ok else ("process", why2 or why)
    return probe.describe()


def shutdown_reference(device):
    sb = _sandboxes.pop((device, "reference"), None)
    if sb is not None:
        sb.stop()


def shutdown():
    for sb in _sandboxes.values():
        sb.stop()
    _sandboxes.clear()


atexit.register(shutdown)
