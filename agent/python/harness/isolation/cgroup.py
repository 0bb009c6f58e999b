"""Control groups for the sandboxes: the judge stops and kills every thread of every process a kernel
made through them, whatever it did to hide (a thread group whose main thread exited, a nested PID
namespace, a double fork), and limits its memory (shared memory and page cache included) and its
number of tasks.

Layout, per sandbox (one directory per hierarchy used):

    <the judge's own cgroup>/autokernel-<judge pid>/sb-<n>/runner     bubblewrap's init and the runner (zygote)
                                                        /c-<k>      one candidate process and all it starts

A process cannot leave its cgroup: the sandbox sees the cgroup file system read-only (or not at all),
without capabilities. Freezing or killing `c-<k>` reaches everything the kernel started.

Where it is done:
  v2 (a cgroup2 mount, pure or the "unified" one of a hybrid system): cgroup.freeze / cgroup.kill
     (Linux 5.14), memory.max and pids.max where those controllers can be enabled;
  v1: freezer (freeze, SIGKILL every task, thaw), memory.limit_in_bytes, pids.max.
The two mix on a hybrid system (freeze and kill by v2, memory and pids by v1). Where no hierarchy
is writable (not root, no delegation) `Layout.detect()` says why, the judge falls back to finding
processes by PID namespace and signals, and every result says the isolation is weaker.
AUTOKERNEL_CGROUP=none|v1|v2 forces a choice (tests; v1 on a hybrid machine).
"""

import errno
import os
import signal
import time

_layout = None


def _read(path):
    with open(path) as f:
        return f.read()


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _mounts():
    """[(mount point, fstype, super options)] of cgroup file systems."""
    out = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, rfields = left.split(), right.split()
                if len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
                    out.append((fields[4].replace("\\040", " "), rfields[0], set(rfields[2].split(","))))
    except OSError:
        pass
    return out


def _own_paths():
    """{controller or '' (v2): path of this process's cgroup}."""
    out = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    for c in (parts[1].split(",") if parts[1] else [""]):
                        out[c] = parts[2]
    except OSError:
        pass
    return out


def _join(mount, path):
    return os.path.join(mount, path.lstrip("/")) if path not in ("", "/") else mount


def _try_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
        return True
    except OSError:
        return False


class Layout:
    """Where this judge's groups live: base directories per role (kill: v2 or v1 freezer; memory;
    pids), or why there is none."""

    def __init__(self):
        self.kill = None        # ("v2", dir) or ("v1", freezer dir)
        self.memory = None      # ("v2", dir) or ("v1", memory dir)
        self.pids = None
        self.why = ""

    @property
    def usable(self):
        return self.kill is not None

    def version(self):
        """'v2', 'v1', or 'v2+v1' (a hybrid: freeze and kill by v2, limits by v1); '' when none."""
        if not self.usable:
            return ""
        kinds = {k for k, _ in filter(None, (self.kill, self.memory, self.pids))}
        return "v2+v1" if len(kinds) == 2 else kinds.pop()

    def dirs(self):
        return [d for _, d in filter(None, (self.kill, self.memory, self.pids))]

    @classmethod
    def detect(cls):
        lay = cls()
        force = os.environ.get("AUTOKERNEL_CGROUP", "").lower()
        if force == "none":
            lay.why = "AUTOKERNEL_CGROUP=none"
            return lay
        own = _own_paths()
        name = "autokernel-%d" % os.getpid()
        v2 = [m for m in _mounts() if m[1] == "cgroup2"]
        v1 = {c: m for m in _mounts() if m[1] == "cgroup" for c in ("freezer", "memory", "pids") if c in m[2]}
        tried = []
        if v2 and force != "v1":
            base = os.path.join(_join(v2[0][0], own.get("", "/")), name)
            if _try_dir(base) and os.path.exists(os.path.join(base, "cgroup.kill")) \
                    and os.path.exists(os.path.join(base, "cgroup.freeze")):
                lay.kill = ("v2", base)
                # memory and pids in v2: only where the parent lets children have them
                have = set(_read(os.path.join(base, "cgroup.controllers")).split())
                want = [c for c in ("memory", "pids") if c in have]
                try:
                    if want:
                        _write(os.path.join(base, "cgroup.subtree_control"), " ".join("+" + c for c in want))
                    for c in want:
                        setattr(lay, c, ("v2", base))
                except OSError:
                    pass
            else:
                if os.path.isdir(base):
                    _rmdir(base)
                tried.append("cgroup v2 at %s is not writable or has no cgroup.kill (Linux 5.14+)" % v2[0][0])
        elif force != "v1":
            tried.append("no cgroup v2 mounted")
        for c in ("freezer", "memory", "pids"):
            role = "kill" if c == "freezer" else c
            if getattr(lay, role) is not None or force == "v2":
                continue
            if c not in v1:
                tried.append("no cgroup v1 %s hierarchy" % c)
                continue
            base = os.path.join(_join(v1[c][0], own.get(c, "/")), name)
            if _try_dir(base):
                setattr(lay, role, ("v1", base))
            else:
                tried.append("cgroup v1 %s at %s is not writable" % (c, v1[c][0]))
        if not lay.usable:
            for d in lay.dirs():
                _rmdir(d)
            lay.memory = lay.pids = None
            lay.why = "; ".join(tried) or "no cgroup file system"
        for d in set(lay.dirs()):
            _sweep_stale(os.path.dirname(d))
        return lay

    def cleanup(self):
        """Removes this judge's empty groups (bottom up); Group.create makes the base again."""
        for d in set(self.dirs()):
            _rmtree_groups(d)

    def ensure(self):
        """The base directories exist (again, after cleanup), v2 passing memory and pids on."""
        for d in set(self.dirs()):
            os.makedirs(d, exist_ok=True)
        if self.kill and self.kill[0] == "v2":
            want = [c for c in ("memory", "pids") if getattr(self, c) and getattr(self, c)[0] == "v2"]
            if want:
                try:
                    _write(os.path.join(self.kill[1], "cgroup.subtree_control"), " ".join("+" + c for c in want))
                except OSError:
                    pass


def _rmtree_groups(d):
    for top, _, _ in sorted(os.walk(d), key=lambda x: -len(x[0])):
        _rmdir(top)


def _sweep_stale(parent):
    """Groups of judges that are gone (autokernel-<pid> of a dead pid), emptied by the kernel."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if name.startswith("autokernel-") and name[11:].isdigit() and int(name[11:]) != os.getpid():
            if not os.path.exists("/proc/%s" % name[11:]):
                _rmtree_groups(os.path.join(parent, name))


def layout():
    global _layout
    if _layout is None:
        _layout = Layout.detect()
    return _layout


def cleanup():
    """Removes this judge's empty groups, if it made any."""
    if _layout is not None:
        _layout.cleanup()


def reset():
    """Forget the detected layout (tests that change AUTOKERNEL_CGROUP)."""
    global _layout
    if _layout is not None:
        _layout.cleanup()
    _layout = None


def _dead(tid):
    try:
        with open("/proc/%d/stat" % tid, "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _rmdir(path):
    try:
        os.rmdir(path)
    except OSError:
        pass


class Group:
    """One cgroup in each hierarchy of the layout (a sandbox's `runner`, or a candidate `c-<k>`)."""

    def __init__(self, paths):
        self.paths = paths          # {"kill": (kind, dir), "memory": ..., "pids": ...}

    @classmethod
    def create(cls, lay, rel, memory_bytes=None, pids_max=None):
        lay.ensure()
        paths = {}
        for role in ("kill", "memory", "pids"):
            entry = getattr(lay, role)
            if entry is None:
                continue
            kind, base = entry
            d = os.path.join(base, rel)
            os.makedirs(d, exist_ok=True)
            paths[role] = (kind, d)
        if lay.kill[0] == "v2":
            # a v2 parent passes memory and pids on only where its subtree_control says so
            parent = os.path.dirname(paths["kill"][1])
            want = [r for r in ("memory", "pids") if paths.get(r, ("",))[0] == "v2"]
            if want and parent != lay.kill[1]:
                try:
                    _write(os.path.join(parent, "cgroup.subtree_control"), " ".join("+" + c for c in want))
                except OSError:
                    pass
        g = cls(paths)
        g.set_limits(memory_bytes, pids_max)
        return g

    def set_limits(self, memory_bytes, pids_max):
        if memory_bytes:
            kind, d = self.paths.get("memory", (None, None))
            try:
                if kind == "v2":
                    _write(os.path.join(d, "memory.max"), str(int(memory_bytes)))
                    if os.path.exists(os.path.join(d, "memory.swap.max")):
                        _write(os.path.join(d, "memory.swap.max"), "0")
                elif kind == "v1":
                    _write(os.path.join(d, "memory.limit_in_bytes"), str(int(memory_bytes)))
                    try:        # swap counted too, where the kernel accounts it (swapaccount=1)
                        _write(os.path.join(d, "memory.memsw.limit_in_bytes"), str(int(memory_bytes)))
                    except OSError:
                        pass
            except OSError:
                self.paths.pop("memory", None)
        if pids_max:
            kind, d = self.paths.get("pids", (None, None))
            try:
                if kind:
                    _write(os.path.join(d, "pids.max"), str(int(pids_max)))
            except OSError:
                self.paths.pop("pids", None)

    def limits(self):
        """What is enforced: {'memory': bool, 'pids': bool}."""
        return {"memory": "memory" in self.paths, "pids": "pids" in self.paths}

    def add(self, pid):
        """Moves process pid (all its threads) into this group, in every hierarchy."""
        for _, d in self.paths.values():
            _write(os.path.join(d, "cgroup.procs"), str(int(pid)))

    def procs_files(self):
        return [os.path.join(d, "cgroup.procs") for _, d in self.paths.values()]

    def _tasks(self):
        """Thread ids in the kill hierarchy (this group and every group below it)."""
        kind, d = self.paths["kill"]
        out = set()
        for top, _, _ in os.walk(d):
            try:
                name = "cgroup.threads" if kind == "v2" else "tasks"
                out.update(int(x) for x in _read(os.path.join(top, name)).split())
            except (OSError, ValueError):
                pass
            if kind == "v2":
                try:
                    out.update(int(x) for x in _read(os.path.join(top, "cgroup.procs")).split())
                except (OSError, ValueError):
                    pass
        return out

    def pids(self):
        return sorted(self._tasks())

    def empty(self):
        """No live task left (a zombie waiting for its parent to reap it counts as dead)."""
        kind, d = self.paths["kill"]
        if kind == "v2":
            try:
                if "populated 0" in _read(os.path.join(d, "cgroup.events")).splitlines():
                    return True
            except OSError:
                return True
        return all(_dead(t) for t in self._tasks())

    def freeze(self, timeout=10.0):
        """Stops every thread of the group; True once the kernel says all are frozen."""
        kind, d = self.paths["kill"]
        if kind == "v2":
            _write(os.path.join(d, "cgroup.freeze"), "1")
            return self._wait(os.path.join(d, "cgroup.events"), "frozen 1", timeout)
        _write(os.path.join(d, "freezer.state"), "FROZEN")
        return self._wait(os.path.join(d, "freezer.state"), "FROZEN", timeout, exact=True)

    def thaw(self):
        kind, d = self.paths["kill"]
        if kind == "v2":
            _write(os.path.join(d, "cgroup.freeze"), "0")
        else:
            _write(os.path.join(d, "freezer.state"), "THAWED")

    @staticmethod
    def _wait(path, want, timeout, exact=False):
        end = time.monotonic() + timeout
        spins = 0
        while True:
            try:
                text = _read(path)
            except OSError:
                return False
            if (text.strip() == want) if exact else (want in text.splitlines()):
                return True
            if time.monotonic() >= end:
                return False
            # The tasks must run to reach the freezer: yield the core (polling tightly on two
            # cores made a freeze 40x slower).
            spins += 1
            if spins < 50:
                os.sched_yield()
            else:
                time.sleep(0.00005 if spins < 200 else 0.001)

    def kill(self, timeout=10.0):
        """Kills every thread of every process in the group (and below); True when none is left.

        Frozen first, so that nothing forks while the threads are listed; then cgroup.kill (v2) and
        SIGKILL to every thread id listed, since cgroup.kill walks thread group leaders only and
        passes over a group whose leader exited while its other threads run (measured on Linux
        6.18: such a thread survived cgroup.kill); a task with SIGKILL pending cannot fork. Thawed
        after, so that the signals take effect."""
        kind, d = self.paths["kill"]
        end = time.monotonic() + timeout
        while True:
            frozen = self.freeze(min(2.0, max(0.1, end - time.monotonic())))
            if kind == "v2":
                try:
                    _write(os.path.join(d, "cgroup.kill"), "1")
                except OSError as e:
                    if e.errno != errno.ENOENT:
                        raise
            for tid in self._tasks():
                try:
                    os.kill(tid, signal.SIGKILL)
                except OSError:
                    pass
            self.thaw()
            if not frozen:
                time.sleep(0.01)
            settle = min(end, time.monotonic() + 1.0)
            while time.monotonic() < settle:
                if self.empty():
                    return True
                time.sleep(0.002)
            if time.monotonic() >= end:
                return self.empty()

    def oom_kills(self):
        """How many processes the memory limit killed (0 where it cannot be told)."""
        kind, d = self.paths.get("memory", (None, None))
        try:
            if kind == "v2":
                text = _read(os.path.join(d, "memory.events"))
            elif kind == "v1":
                text = _read(os.path.join(d, "memory.oom_control"))
            else:
                return 0
        except OSError:
            return 0
        for line in text.splitlines():
            k, _, v = line.partition(" ")
            if k == "oom_kill":
                return int(v or 0)
        return 0

    def memory_failures(self):
        """v1: times the limit was hit (memory.failcnt); v2: memory.events' max."""
        kind, d = self.paths.get("memory", (None, None))
        try:
            if kind == "v1":
                return int(_read(os.path.join(d, "memory.failcnt")))
            if kind == "v2":
                for line in _read(os.path.join(d, "memory.events")).splitlines():
                    if line.startswith("max "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def remove(self):
        """Removes the (empty) group's directories, children first."""
        for _, d in self.paths.values():
            for top, dirs, _ in sorted(os.walk(d), key=lambda x: -len(x[0])):
                _rmdir(top)


def describe():
    """Facts for `doctor` and the isolation field: {cgroup: 'v2'|'v1'|'v2+v1'|None, memory, pids, why}."""
    lay = layout()
    return {"cgroup": lay.version() or None,
            "memory": bool(lay.memory), "pids": bool(lay.pids), "why": lay.why}


WARNING = ("no writable cgroup: the judge finds a kernel's processes by PID namespace and stops them "
           "with signals, so a process that hides (a thread group whose main thread exited, a nested "
           "namespace) can survive a bench or run while the reference is timed, and shared memory is "
           "not counted against the memory limit (run the worker as root, or delegate a cgroup to it)")
