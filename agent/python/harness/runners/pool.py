"""The judge's side of the runners: one reference runner and one candidate zygote per device, each in
its own sandbox, started on first use and kept warm across benches; one fresh candidate process per
bench, forked by the zygote and killed (with everything it started) when the bench ends.
"""

import atexit
import itertools
import os
import tempfile
import time

from ..isolation import sandbox
from ..ipc import wire

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

    def request(self, message, fds=(), cap=None, spin=0.0):
        t0 = time.perf_counter()
        try:
            self.conn.send(message, fds)
            reply, extra = self.conn.recv(self.deadline.left(cap), spin)
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
    sb = sandbox.Sandbox(device, "zygote" if role in CANDIDATE_ROLES else "serve", worker_dir)
    sb.role = role
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
    roles = ("candidate", "reference") + (("candidate-b",) if device in SPARE_DEVICES else ())
    for role in roles:
        try:
            _spawn(device, role, worker_dir)
        except Exception:  # noqa: BLE001 - reported when the runner is needed
            pass


def reference(device, worker_dir, deadline):
    sb = _sandbox(device, "reference", worker_dir)
    return Runner(sb.conn, "the reference runner", deadline), sb


class Candidate:
    """A fresh process for one kernel, forked inside a candidate sandbox.

    On CUDA the next candidate's process (a spare) makes its CUDA context and Triton's first launch
    before its bench, so that no bench waits for them. With bubblewrap there are two candidate
    sandboxes, each its own PID namespace and file tree: the spare is forked in the one this kernel
    does not run in, as this bench starts, and warms while the kernel is checked; the judge waits for
    it (settle_spare) before the timing starts, so it never takes the GPU from a timed round. Without
    bubblewrap (one PID namespace for everything) the spare is forked only once this kernel and all
    it started are dead (finish). Either way nothing of one kernel reaches the next one's process: it
    runs only the judge's code until the next bench adopts it."""

    def __init__(self, device, worker_dir, deadline):
        self.device, self.worker_dir = device, worker_dir
        adopted = _adopt_spare(device, deadline)
        if adopted is None:
            self.sb = _sandbox(device, "candidate", worker_dir)
            adopted = _fork(self.sb, deadline)
        else:
            self.sb, adopted = adopted
        self.cwd, judge_end, self.ns_pid = adopted
        self.group = self.sb.groups.get(self.ns_pid)       # its cgroup (None without cgroups)
        self.runner = Runner(judge_end, "the kernel's process", deadline, self._exit_text)
        self._fork_spare_beside()

    def _fork_spare_beside(self):
        """The next bench's process, in the other candidate sandbox, if that one is up (it starts with
        the first bench and imports torch beside it; until it is ready, finish forks the spare)."""
        if self.device not in SPARE_DEVICES or self.sb.kind != "bubblewrap":
            return
        other = "candidate-b" if self.sb.role == "candidate" else "candidate"
        try:
            osb = _spawn(self.device, other, self.worker_dir)
            if osb.leader is None and not osb.wait_ready(0):
                return
            osb.ready()
            _spares[self.device] = (osb, _fork(osb, Deadline(30)))
        except (RunnerFailure, RuntimeError, OSError):
            _sandboxes.pop((self.device, other), None)      # started again for a later bench

    def settle_spare(self, deadline):
        """Waits until the spare is warm (or drops it): the timing must not share the GPU with it."""
        entry = _spares.get(self.device)
        if entry is None or entry[0] is self.sb:
            return
        owner, (cwd, conn, _) = entry
        try:
            if Runner(conn, "the spare kernel process", deadline).request({"op": "ping"}, cap=30).get("ok"):
                return
        except RunnerFailure:
            pass
        _spares.pop(self.device, None)
        conn.close()
        _drop_fork(owner, cwd, entry[1][2])

    def _exit_text(self):
        tail = self.output_tail(1500)
        text = (": its output ends with:\n" + tail) if tail else ""
        if self.group is not None and self.group.oom_kills():
            text = ": killed by the sandbox's memory limit (%d MB, shared memory and files counted)%s" % (
                self.sb.memory_limit_mb, text)
        return text

    def output_tail(self, limit=4000):
        return sandbox.file_tail(self.sb.host_path(os.path.join(self.cwd, "output.log")), limit)

    def host_path(self, path):
        """Where the judge writes or reads a path of this kernel's scratch."""
        return self.sb.host_path(path)

    def host_pid(self):
        """This kernel's process as the judge sees it (outside its PID namespace), or None: also None
        when it is not where it must be (a live thread group leader in its cgroup)."""
        pid = self.sb.host_pid(self.ns_pid)
        if pid is not None and self.group is not None and pid not in self.group.pids():
            return None
        return pid

    def freeze(self):
        """Stops the kernel's process and everything it started: through its cgroup (every thread,
        whatever its namespace or a zombie leader), else by signals to its sandbox's members."""
        if self.group is not None and self.group.freeze():
            return
        self.sb.freeze(spare=(self.sb.init_pid,))

    def thaw(self):
        if self.group is not None:
            self.group.thaw()
            if self.sb._frozen is None:
                return
        self.sb.thaw(spare=(self.sb.init_pid,))

    def finish(self):
        """Kill the candidate and everything it started; wipe its files. Returns a note when the
        sandbox had to be restarted (a process would not die, or the zygote was hurt)."""
        note = ""
        self.runner.conn.close()
        if not self.sb.release(self.ns_pid) or not self.sb.kill_except_leader():
            note = "a process of the kernel would not die: the candidate sandbox was restarted"
            self.sb.stop()
        elif not self.sb.alive():
            note = "the candidate sandbox died during the bench and was restarted"
            self.sb.stop()
        else:
            self.sb.wipe(self.cwd)
            _clean_ipc(self.sb)
            spare = _spares.get(self.device)
            self.sb.fresh_scratch(keep=[spare[1][0]] if spare and spare[0] is self.sb else [])
            if self.device in SPARE_DEVICES and self.device not in _spares:
                try:
                    _spares[self.device] = (self.sb, _fork(self.sb, Deadline(30)))
                except RunnerFailure:
                    pass            # the next bench forks its own and reports what fails
        return note


# Where a spare pays for itself: a CUDA context and Triton's first launch (~0.9 s); on the CPU a
# fork costs milliseconds. AUTOKERNEL_SPARE_RUNNER=0 turns it off (a side-by-side measurement).
SPARE_DEVICES = () if os.environ.get("AUTOKERNEL_SPARE_RUNNER") == "0" else ("cuda",)
CANDIDATE_ROLES = ("candidate", "candidate-b")
_spares = {}                    # device -> (Sandbox, (cwd, connection, namespace pid))


def _fork(sb, deadline):
    """(cwd, the judge's end of its socket, its pid in the namespace) of a new process of the zygote,
    moved into a cgroup of its own before it runs anything but the judge's code. With a tmpfs scratch
    the process makes its own directory (the judge's files there would belong to no user inside)."""
    if sb.scratch_mb:
        cwd = os.path.join(sb.root, "c-%d-%s" % (next(_fork_seq), os.urandom(6).hex()))
    else:
        cwd = tempfile.mkdtemp(prefix="c-", dir=sb.root)
    judge_end, child = wire.pair()
    try:
        zr = Runner(sb.conn, "the candidate zygote", deadline)
        reply = zr.request({"op": "fork", "cwd": cwd}, fds=[child.fileno()], cap=30)
    except RunnerFailure:
        judge_end.close()
        raise
    finally:
        child.close()
    if not reply.get("ok"):
        judge_end.close()
        raise RunnerFailure("the candidate zygote refused to fork: %s" % reply.get("error"), "protocol")
    try:
        sb.adopt(int(reply["pid"]))
    except OSError as e:
        judge_end.close()
        raise RunnerFailure("the new kernel process could not be put in its cgroup: %s" % e, "crash")
    return cwd, judge_end, int(reply["pid"])


_fork_seq = itertools.count(1)


def _clean_ipc(sb):
    """The zygote removes System V IPC objects the kernel left in the sandbox's IPC namespace (only
    with bubblewrap: without it there is no namespace of its own, and the host's are not ours)."""
    if sb.kind != "bubblewrap":
        return
    try:
        Runner(sb.conn, "the candidate zygote", Deadline(10)).request({"op": "clean_ipc"}, cap=10)
    except RunnerFailure:
        pass


def _drop_fork(owner, cwd, ns_pid):
    """A fork no bench will use: killed (with its cgroup) and its files wiped."""
    owner.release(ns_pid)
    owner.wipe(cwd)


def _adopt_spare(device, deadline):
    """(its sandbox, its fork) of the spare, if its sandbox is up and it answers (its warm-up done);
    None otherwise, its files wiped (its process dies with the next bench of its sandbox)."""
    entry = _spares.pop(device, None)
    if entry is None:
        return None
    owner, (cwd, conn, ns_pid) = entry
    if owner.alive() and _sandboxes.get((device, owner.role)) is owner:
        try:
            if Runner(conn, "the spare kernel process", deadline).request({"op": "ping"}, cap=30).get("ok"):
                return owner, (cwd, conn, ns_pid)
        except RunnerFailure:
            pass
    conn.close()
    _drop_fork(owner, cwd, ns_pid)
    return None


def isolation(device):
    """What the next candidate gets, without starting anything."""
    sb = _sandboxes.get((device, "candidate"))
    if sb is not None:
        return sb.describe()
    probe = sandbox.Sandbox.__new__(sandbox.Sandbox)
    probe.device, probe.memory_limit_mb = device, sandbox.default_memory_limit_mb()
    lay = sandbox.cgroup.layout()
    probe.mode, probe.cgroup_why = "probe", lay.why
    probe.group = _LayoutLimits(lay) if lay.usable else None
    bwrap, why = sandbox.find_bwrap()
    ok, why2 = sandbox.probe(bwrap, device) if bwrap else (False, why)
    probe.kind, probe.weaker_because = ("bubblewrap", "") if ok else ("process", why2 or why)
    return probe.describe()


class _LayoutLimits:
    """What a candidate's group would enforce, for isolation() before any sandbox exists."""

    def __init__(self, lay):
        self.lay = lay

    def limits(self):
        return {"memory": bool(self.lay.memory), "pids": bool(self.lay.pids)}


def shutdown_reference(device):
    sb = _sandboxes.pop((device, "reference"), None)
    if sb is not None:
        sb.stop()


def shutdown():
    for _, (_, conn, _) in _spares.values():
        conn.close()
    _spares.clear()
    for sb in _sandboxes.values():
        sb.stop()
    _sandboxes.clear()
    sandbox.cgroup.cleanup()                # this judge's groups, now empty


atexit.register(shutdown)
