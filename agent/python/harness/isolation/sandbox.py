"""Where candidate code runs: a runner process inside bubblewrap (Debian's `bubblewrap`), or, where
bubblewrap is missing or refused, a plain child process that says so.

With bubblewrap the runner gets: new user/PID/network/IPC/UTS namespaces (nothing it starts outlives
the sandbox, no network), the whole file system read-only except one scratch directory the judge
owns and wipes, a minimal /dev (plus the NVIDIA device nodes for CUDA), its own /proc, no
capabilities, a cleared environment with an allow-list of variables (never an API key), no file
descriptor but its own socket, a new session, death with the judge, and an address-space limit on
the CPU. Without it ("process" isolation) the runner still gets the environment allow-list, the
scratch directory as its home, the descriptor hygiene, the limits and death with the judge, but
not the file system or PID isolation: every result then carries that, so the window can say so.

The judge keeps processes of a sandbox by its cgroup (cgroup.py) where one is writable: each
candidate process is moved into a group of its own as it is forked, so whatever it starts (a thread
group whose main thread exited, a nested namespace, a double fork) is stopped and killed with it,
and its memory (shared memory and files in its scratch included) and task count are limited. Without
one it falls back to the PID namespace: `members()` lists processes from /proc, so a daemon that
double-forks is still found, stopped (`freeze`) while the reference is timed, and killed between
candidates, and describe() says the isolation is weaker.

A candidate sandbox (mode "zygote") also gets: no nested user namespaces (`--disable-userns`), a
size-capped tmpfs as its scratch (`--size`, out of the host's reach, emptied between candidates),
and, when the judge runs as root, an unprivileged uid (host root's files, such as /etc/shadow, stay
closed to it).
"""

import ctypes
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import cgroup

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4

# Variables a runner may see; everything else (API keys, tokens, cloud credentials) is dropped.
ENV_ALLOW = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
             "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME",
             "CUDA_PATH", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH", "OMP_NUM_THREADS",
             "MKL_NUM_THREADS", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
             "NVSHMEM_DISABLE_NVLS")
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"

_probe_cache = {}


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def make_undumpable():
    """No process of the same user may ptrace this one or read its /proc/<pid>/{mem,fd,environ}."""
    try:
        _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def find_bwrap():
    """(path, why-not). AUTOKERNEL_BWRAP overrides: a path, or 'none' to refuse bubblewrap."""
    forced = os.environ.get("AUTOKERNEL_BWRAP")
    if forced:
        if forced.lower() == "none":
            return None, "AUTOKERNEL_BWRAP=none"
        return (forced, "") if os.access(forced, os.X_OK) else (None, "AUTOKERNEL_BWRAP=%s is not executable" % forced)
    path = shutil.which("bwrap", path=os.environ.get("PATH", "") + ":/usr/bin:/bin")
    return (path, "") if path else (None, "bubblewrap (bwrap) is not installed: apt install bubblewrap")


_help_cache = {}


def bwrap_supports(bwrap, option):
    """Whether this bubblewrap knows `option` (--disable-userns: 0.8; --size: 0.5)."""
    if bwrap not in _help_cache:
        try:
            _help_cache[bwrap] = subprocess.run([bwrap, "--help"], capture_output=True, text=True,
                                                timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            _help_cache[bwrap] = ""
    return option in _help_cache[bwrap]


# Host files a sandbox never sees, whoever it runs as (a root-run judge whose runner paths are not
# readable by an unprivileged uid keeps root inside the sandbox: these at least stay closed).
SECRET_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
                "/etc/security/opasswd")
SECRET_DIRS = ("/etc/ssh", "/etc/ssl/private", "/etc/sudoers.d", "/var/lib", "/var/log", "/var/spool",
               "/var/mail", "/var/backups", "/boot")


def sandbox_uid():
    """(uid, gid) a candidate sandbox runs as when the judge is root (AUTOKERNEL_SANDBOX_UID, default
    nobody), or None: not root, or AUTOKERNEL_SANDBOX_UID=0."""
    if os.geteuid() != 0:
        return None
    env = os.environ.get("AUTOKERNEL_SANDBOX_UID", "65534")
    if not env.isdigit() or int(env) == 0:
        return None
    return int(env), int(env)


def readable_by_others(paths):
    """'' when every path (and each directory above it) can be read by any user; else the first that
    cannot."""
    import stat
    for p in paths:
        p = os.path.realpath(p)
        parts = p.split("/")
        for i in range(2, len(parts) + 1):
            q = "/".join(parts[:i]) or "/"
            try:
                st = os.stat(q)
            except OSError:
                return q
            need = stat.S_IXOTH if stat.S_ISDIR(st.st_mode) else stat.S_IROTH
            if q == p and stat.S_ISDIR(st.st_mode):
                need |= stat.S_IROTH
            if not st.st_mode & need:
                return q
    return ""


def gpu_nodes():
    try:
        names = sorted(os.listdir("/dev"))
    except OSError:
        return []
    return ["/dev/" + n for n in names if n.startswith("nvidia") or n in ("kfd", "dri")]


# Hidden from the runner (a fresh tmpfs is mounted over each): other users' and this user's files,
# sockets that would reach outside (ssh-agent, X11 and D-Bus under /tmp and /run), the settings file
# that may hold an API key. What the runner needs below them is bound back, read-only.
HIDDEN = ("/tmp", "/var/tmp", "/run", "/home", "/root", "/media", "/mnt", "/srv")


def needed_paths(worker_dir):
    """Host paths the runner must read: its own code, the interpreter and everything on sys.path,
    library paths named in the environment."""
    paths = [worker_dir, sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)),
             os.path.dirname(os.path.abspath(sys.executable))]
    paths += [p for p in sys.path if p]
    for var in ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"):
        paths += [p for p in os.environ.get(var, "").split(os.pathsep) if p]
    out = []
    for p in paths:
        p = os.path.abspath(p)
        if os.path.exists(p) and p not in out:
            out.append(p)
    return out


def _under(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def bwrap_argv(bwrap, root, device, env, cwd, worker_dir, extra_ro=(), private_shm=False, scratch_mb=0,
               scratch_dirs=(), no_userns=False):
    """private_shm: /dev/shm stays a writable tmpfs of this sandbox's own (gone with it). Python's
    multiprocessing needs it for its locks, and torch.compile's parallel compile workers need those;
    only for a sandbox that serves one job start to end (verify's model runner), never for the
    candidates' zygote, where a file left there would outlive one candidate.
    scratch_mb: `root` is a tmpfs of that size inside the sandbox (not the host directory), with
    `scratch_dirs` made in it. no_userns: no user namespace can be made inside (bubblewrap 0.8)."""
    home = os.path.realpath(os.path.expanduser("~"))
    hidden = []
    for h in HIDDEN + (home, "/dev/shm"):
        if h != "/" and h not in hidden and (os.path.isdir(h) or h == "/dev/shm") \
                and not any(_under(h, [k]) for k in hidden):
            hidden.append(h)
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for h in hidden:
        argv += ["--tmpfs", h]
    needed = needed_paths(worker_dir) + [os.path.abspath(x) for x in extra_ro if os.path.exists(x)]
    secret = []
    if os.geteuid() == 0:
        for f in SECRET_FILES:
            if os.path.isfile(f):
                argv += ["--ro-bind", "/dev/null", f]
        for d in SECRET_DIRS:
            if os.path.isdir(d) and not _under(root, [d]) and not _under(d, hidden) \
                    and not any(_under(p, [d]) and p != d for p in needed):
                secret.append(d)
                argv += ["--tmpfs", d]
    for p in needed:
        # Bound back only below a hidden directory, never one of them (or an ancestor) whole.
        if _under(p, hidden + secret) and not _under(p, [root]) and not any(_under(h, [p]) for h in hidden):
            argv += ["--ro-bind", p, p]
    for d in secret:
        argv += ["--remount-ro", d]
    if scratch_mb:
        argv += ["--size", str(int(scratch_mb) << 20), "--perms", "0700", "--tmpfs", root]
        for d in scratch_dirs:
            argv += ["--dir", d]
    else:
        argv += ["--bind", root, root]
    for h in hidden:
        if not (private_shm and h == "/dev/shm"):
            argv += ["--remount-ro", h]  # nothing written outside the scratch survives a candidate
    argv += ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
             "--clearenv", "--chdir", cwd, "--info-fd", "__INFO_FD__"]
    if no_userns:
        argv += ["--unshare-user", "--disable-userns"]
    if device == "cuda":
        for node in gpu_nodes():
            argv += ["--dev-bind", node, node]
    for k, v in sorted(env.items()):
        argv += ["--setenv", k, v]
    return argv


def _drop_to(ids):
    """A preexec step: become uid/gid `ids` (no supplementary groups)."""
    if ids:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])


def probe(bwrap, device, ids=None, hardened=False):
    """(works, reason): runs /bin/true in the sandbox once per judge process. ids: the (uid, gid) it
    runs as; hardened: with the candidate's options (tmpfs scratch, no nested user namespaces)."""
    key = (bwrap, device, ids, hardened)
    if key not in _probe_cache:
        root = tempfile.mkdtemp(prefix="ak-probe-", dir=sandbox_base())
        try:
            extra = dict(scratch_mb=16, scratch_dirs=[root + "/z"], no_userns=True) if hardened else {}
            argv = bwrap_argv(bwrap, root, device, {"PATH": SAFE_PATH}, root + "/z" if hardened else root,
                              root, **extra)
            i = argv.index("--info-fd")
            del argv[i:i + 2]
            out = subprocess.run(argv + ["/bin/true"], capture_output=True, text=True, timeout=30,
                                 preexec_fn=(lambda: _drop_to(ids)) if ids else None)
            ok = out.returncode == 0
            _probe_cache[key] = (ok, "" if ok else "bubblewrap refused to start a sandbox here (%s)"
                                 % (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1])
        except (OSError, subprocess.SubprocessError) as e:
            _probe_cache[key] = (False, "bubblewrap could not be run: %s" % e)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return _probe_cache[key]


def sandbox_base():
    """Where sandbox roots (the runners' scratch directories) live, bound read-write into the sandbox."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for base in (os.path.join(cache, "autokernel", "sandbox"), os.path.join(tempfile.gettempdir(),
                                                                         "autokernel-sandbox-%d" % os.getuid())):
        try:
            os.makedirs(base, mode=0o700, exist_ok=True)
            if os.access(base, os.W_OK):
                return base
        except OSError:
            pass
    raise RuntimeError("no writable directory for the sandbox (tried %s)" % cache)


def sweep(base):
    """Removes sandbox roots left by judges that died without cleaning up (kill -9, a crash)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        root = os.path.join(base, name)
        if not name.startswith(("ak-sandbox-", "ak-probe-")):
            continue
        try:
            with open(os.path.join(root, ".owner")) as f:
                owner = int(f.read().strip() or 0)
        except (OSError, ValueError):
            owner = 0
            try:
                if time.time() - os.stat(root).st_mtime < 3600:
                    continue            # being created right now by someone
            except OSError:
                continue
        if owner and _alive(owner):
            continue
        shutil.rmtree(root, ignore_errors=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def default_memory_limit_mb():
    """Half the machine's memory, at least 4 GiB and at most 64 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError):
        total = 16384
    return int(min(65536, max(4096, total // 2)))


_seq = [0]
# What the window and the loop show after "bubblewrap" where no cgroup contains the kernel.
NO_CGROUP = "no writable cgroup: a kernel's hidden processes are not contained"
RUNNER_DIRS = ("home", "tmp", "cache", "triton", "inductor")


def pids_limit():
    """Tasks (threads) a candidate's group may hold: AUTOKERNEL_SANDBOX_PIDS, else 64 per core, at
    least 1024 (torch starts a pool of threads per core)."""
    env = os.environ.get("AUTOKERNEL_SANDBOX_PIDS", "")
    return int(env) if env.isdigit() and int(env) > 0 else max(1024, 64 * (os.cpu_count() or 1))


def runner_env(root, cwd, device):
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    home = os.path.join(cwd, "home")
    env.update({
        "PATH": SAFE_PATH + ":" + os.path.dirname(sys.executable),
        "HOME": home, "TMPDIR": os.path.join(cwd, "tmp"), "XDG_CACHE_HOME": os.path.join(cwd, "cache"),
        "TRITON_CACHE_DIR": os.path.join(cwd, "triton"), "TORCHINDUCTOR_CACHE_DIR": os.path.join(cwd, "inductor"),
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "AK_RUNNER_ROOT": root,
        # A fixed heap: with glibc's sliding mmap threshold, whether a call's temporaries are fresh
        # pages (a fault each) depends on the process's allocation history, and the same code timed
        # 50x slower in one runner than in another on a VM.
        "GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296",
        "AK_SYSPATH": json.dumps([p for p in sys.path if p]),
    })
    env.setdefault("LANG", "C.UTF-8")
    return env


class Sandbox:
    """One runner process (and whatever it starts) in its own sandbox.

    mode "serve": the runner serves one connection (the reference). mode "zygote": it imports torch
    once and forks a fresh runner per candidate (fork_candidate). mode "model": `serve`
    ("module:function", importable from worker_dir) serves the connection instead (verify's model
    runner, modelplug.child:serve)."""

    def __init__(self, device, mode, worker_dir, memory_limit_mb=None, extra_ro=(), private_shm=False,
                 group_name=None, serve=None):
        self.device, self.mode, self.worker_dir = device, mode, worker_dir
        self.serve = serve
        self.private_shm = private_shm       # see bwrap_argv
        self.extra_ro = list(extra_ro)       # more host paths the runner reads (a model's folder)
        if memory_limit_mb is None:
            env = os.environ.get("AUTOKERNEL_SANDBOX_MEMORY_MB", "")
            memory_limit_mb = int(env) if env.isdigit() else default_memory_limit_mb()
        self.memory_limit_mb = memory_limit_mb
        base = sandbox_base()
        sweep(base)
        self.root = tempfile.mkdtemp(prefix="ak-sandbox-", dir=base)
        os.chmod(self.root, 0o700)
        with open(os.path.join(self.root, ".owner"), "w") as f:
            f.write(str(os.getpid()))
        os.mkdir(os.path.join(self.root, "zygote"))
        self.proc = None
        self.conn = None
        self._info_r = None
        self._frozen = None
        self.hello = None
        self.ns = None                # the sandbox's PID namespace (inode link text)
        self.init_pid = None          # host pid of bubblewrap's init (pid 1 of the namespace)
        self.leader = None            # host pid of the runner (the zygote, or the serving runner)
        bwrap, why = find_bwrap()
        ok, why2 = probe(bwrap, device) if bwrap else (False, why)
        self.kind = "bubblewrap" if ok else "process"
        self.weaker_because = "" if ok else (why2 or why)
        self.bwrap = bwrap if ok else None
        self.ids = None               # (uid, gid) the sandbox runs as, when not the judge's
        self.scratch_mb = 0           # a tmpfs scratch of this size (candidate sandboxes)
        self.no_userns = False
        self.hardening = []           # what a candidate sandbox could not get here, and why
        if self.bwrap and mode == "zygote":
            self._harden(device, worker_dir)
        self._group_setup(group_name or mode)

    def _harden(self, device, worker_dir):
        """A candidate sandbox: no nested user namespaces, a size-capped tmpfs scratch, and an
        unprivileged uid when the judge is root; each where this bubblewrap and machine allow."""
        if bwrap_supports(self.bwrap, "--disable-userns") and bwrap_supports(self.bwrap, "--size"):
            if probe(self.bwrap, device, None, True)[0]:
                self.no_userns = True
                env = os.environ.get("AUTOKERNEL_SANDBOX_SCRATCH_MB", "")
                self.scratch_mb = int(env) if env.isdigit() and int(env) > 0 else 1024
            else:
                self.hardening.append("bubblewrap refused --disable-userns/--size here")
        else:
            self.hardening.append("bubblewrap %s lacks --disable-userns or --size (0.8 has both)" % self.bwrap)
        ids = sandbox_uid()
        if ids and self.scratch_mb:
            nodes = gpu_nodes() if device == "cuda" else []
            bad = readable_by_others(needed_paths(worker_dir) + self.extra_ro + nodes)
            if bad:
                self.hardening.append("runs as root inside: %s is not readable by uid %d" % (bad, ids[0]))
            elif not probe(self.bwrap, device, ids, True)[0]:
                self.hardening.append("runs as root inside: bubblewrap would not start as uid %d" % ids[0])
            else:
                self.ids = ids

    def _group_setup(self, name):
        """This sandbox's cgroup (see cgroup.py): `runner` holds bubblewrap's init and the runner;
        each candidate gets a `c-<k>` beside it (adopt)."""
        self.groups = {}              # candidate's namespace pid -> cgroup.Group
        self.group = self.top = None
        lay = cgroup.layout()
        self.cgroup_why = lay.why
        if not lay.usable:
            return
        _seq[0] += 1
        self.group_rel = "%s-%d" % (name, _seq[0])
        try:
            limit = self.memory_limit_mb << 20 if self._limit_applies() else None
            self.top = cgroup.Group.create(lay, self.group_rel)
            self.group = cgroup.Group.create(lay, self.group_rel + "/runner", limit, pids_limit())
        except OSError as e:
            self.cgroup_why = "cannot make a cgroup: %s" % e
            self.group = self.top = None

    def describe(self):
        d = {"sandbox": self.kind, "memory_limit_mb": self.memory_limit_mb if self._limit_applies() else None,
             "network": self.kind == "process", "pid_namespace": self.kind == "bubblewrap",
             "read_only_filesystem": self.kind == "bubblewrap"}
        lay = cgroup.layout()
        d["cgroup"] = lay.version() if self.group is not None else None
        if self.group is not None:
            lim = self.group.limits()
            d["memory_counts_shared"] = lim["memory"]
            d["pids_limit"] = pids_limit() if lim["pids"] else None
        else:
            d["cgroup_warning"] = cgroup.WARNING + (" (%s)" % self.cgroup_why if self.cgroup_why else "")
        if self.mode == "zygote" and self.kind == "bubblewrap":
            d["nested_namespaces"] = not self.no_userns
            d["scratch_mb"] = self.scratch_mb or None
            d["uid"] = self.ids[0] if self.ids else os.geteuid()
            if self.hardening:
                d["hardening_missing"] = "; ".join(self.hardening)
        weaker = [w for w in (self.weaker_because, NO_CGROUP if self.group is None else "") if w]
        if weaker:
            d["weaker_because"] = "; ".join(weaker)
        return d

    def host_path(self, path):
        """Where the judge reaches a path of the scratch: through the sandbox's root when the scratch
        is its own tmpfs."""
        if self.scratch_mb and self.init_pid:
            return "/proc/%d/root%s" % (self.init_pid, path)
        return path

    def adopt(self, ns_pid):
        """Moves a freshly forked candidate process (still running only the judge's code) into a
        cgroup of its own; returns that Group (None without cgroups). Raises OSError when the
        process cannot be found or moved."""
        if self.group is None:
            return None
        pid = self.host_pid(ns_pid)
        if pid is None:
            raise OSError("the forked process %d is not in the sandbox" % ns_pid)
        _seq[0] += 1
        lay = cgroup.layout()
        limit = self.memory_limit_mb << 20 if self._limit_applies() else None
        g = cgroup.Group.create(lay, "%s/c-%d" % (self.group_rel, _seq[0]), limit, pids_limit())
        try:
            g.add(pid)
        except OSError:
            g.kill(2.0)
            g.remove()
            raise
        self.groups[ns_pid] = g
        return g

    def release(self, ns_pid, timeout=10.0):
        """Kills a candidate's group (every process in it); True when it is empty and removed."""
        g = self.groups.pop(ns_pid, None)
        if g is None:
            return True
        ok = g.kill(timeout)
        g.remove()
        return ok

    def fresh_scratch(self, keep=()):
        """Empties the scratch for the next candidate: everything but the runner's own directories
        (emptied too) and the live candidates' `keep`."""
        top = self.host_path(self.root)
        if not self.scratch_mb or top == self.root:
            return
        keep = {os.path.basename(k.rstrip("/")) for k in keep}
        try:
            names = os.listdir(top)
        except OSError:
            return
        for name in names:
            path = os.path.join(top, name)
            if name == "zygote":        # the runner's own: its directories stay, emptied
                for sub in os.listdir(path):
                    inner = os.path.join(path, sub)
                    if sub in RUNNER_DIRS and os.path.isdir(inner) and not os.path.islink(inner):
                        for leaf in os.listdir(inner):
                            _remove(os.path.join(inner, leaf))
                    else:
                        _remove(inner)
            elif name not in keep:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    _unlink(path)

    def _limit_applies(self):
        return self.memory_limit_mb > 0

    def _limit_kind(self):
        # CUDA reserves terabytes of address space at start-up, so RLIMIT_AS would stop it (seen on
        # an H200: "CUDA error: out of memory"); RLIMIT_DATA counts only writable private memory
        # (the heap, torch's CPU tensors) and lets CUDA start.
        return resource.RLIMIT_DATA if self.device == "cuda" else resource.RLIMIT_AS

    def start(self, timeout=120.0):
        self.spawn()
        return self.ready(timeout)

    def spawn(self):
        """Starts the runner without waiting for it (runners import torch: two start in parallel)."""
        from ..ipc import wire
        judge_end, runner_sock = wire.pair()
        cwd = os.path.join(self.root, "zygote")
        env = runner_env(self.root, cwd, self.device)
        for d in RUNNER_DIRS:
            os.makedirs(os.path.join(cwd, d), exist_ok=True)
        procs = self.group.procs_files() if self.group is not None else []
        ids = self.ids
        fd = runner_sock.fileno()
        boot = ("import json,os,sys; sys.path[:0]=[sys.argv[1]]+json.loads(os.environ['AK_SYSPATH']); "
                "from harness.runners import runner; runner.main()")
        cmd = [sys.executable, "-s", "-B", "-c", boot, self.worker_dir, self.mode, str(fd), self.device]
        if self.serve:
            cmd.append(self.serve)
        limit = self.memory_limit_mb * (1 << 20) if self._limit_applies() else None
        kind = self._limit_kind()
        log = open(os.path.join(self.root, "runner.log"), "ab")

        def pre():
            os.setsid()
            for path in procs:       # in its cgroup before it can start anything
                with open(path, "w") as f:
                    f.write(str(os.getpid()))
            _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if limit:
                resource.setrlimit(kind, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            _drop_to(ids)
            if ids:      # PDEATHSIG is cleared by a change of credentials
                _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

        info_r = info_w = None
        if self.bwrap:
            info_r, info_w = os.pipe()
            argv = bwrap_argv(self.bwrap, self.root, self.device, env, cwd, self.worker_dir, self.extra_ro,
                              self.private_shm, scratch_mb=self.scratch_mb,
                              scratch_dirs=[cwd] + [os.path.join(cwd, d) for d in RUNNER_DIRS],
                              no_userns=self.no_userns)
            argv[argv.index("__INFO_FD__")] = str(info_w)
            argv += cmd
            pass_fds = (fd, info_w)
            popen_env = {"PATH": SAFE_PATH}
        else:
            argv, pass_fds, popen_env = cmd, (fd,), env
        try:
            self.proc = subprocess.Popen(argv, pass_fds=pass_fds, env=popen_env, cwd=cwd, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log, preexec_fn=pre, close_fds=True)
        finally:
            runner_sock.close()
            log.close()
            if info_w is not None:
                os.close(info_w)
        self.conn = judge_end
        self._info_r = info_r

    def ready(self, timeout=120.0):
        """Waits for the runner's hello; raises RuntimeError with its log when it does not come."""
        if self.leader is not None:
            return self.hello
        info_r, self._info_r = self._info_r, None
        try:
            if info_r is not None:
                self.init_pid = self._child_pid(info_r, timeout)
                self.ns = os.readlink("/proc/%d/ns/pid" % self.init_pid)
            hello, _ = self.conn.recv(timeout)
            if not hello.get("ok"):
                raise RuntimeError(hello.get("error") or "runner refused to start")
            self.leader = self.host_pid(int(hello["pid"])) if self.bwrap else self.proc.pid
            if self.leader is None:
                raise RuntimeError("runner pid %s not found in the sandbox" % hello.get("pid"))
        except Exception as e:  # noqa: BLE001 - any start failure is reported with the runner's log
            tail = self.log_tail()
            self.stop()
            raise RuntimeError("the %s runner did not start: %s%s" % (self.mode, e, ("\n" + tail) if tail else ""))
        self.hello = hello
        return hello

    def wait_ready(self, timeout):
        """True once the runner's hello has come (ready() then returns without waiting)."""
        if self.leader is not None:
            return True
        import select
        return bool(select.select([self.conn.fileno()], [], [], timeout)[0])

    @staticmethod
    def _child_pid(fd, timeout):
        import select
        with os.fdopen(fd, "rb") as f:
            if not select.select([f], [], [], timeout)[0]:
                raise RuntimeError("bubblewrap reported no child within %.0f s" % timeout)
            data = b""
            while b"}" not in data:
                chunk = os.read(f.fileno(), 4096)
                if not chunk:
                    break
                data += chunk
        return int(json.loads(data[:data.index(b"}") + 1])["child-pid"])

    def log_tail(self, limit=3000):
        return file_tail(os.path.join(self.root, "runner.log"), limit)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def host_pid(self, ns_pid):
        """Host pid of the sandbox member whose pid inside the namespace is ns_pid."""
        for pid in self.members():
            try:
                with open("/proc/%d/status" % pid) as f:
                    for line in f:
                        if line.startswith("NSpid:") and int(line.split()[-1]) == ns_pid:
                            return pid
            except (OSError, ValueError):
                pass
        return None

    def members(self):
        """Host pids of every process in this sandbox (for "process" isolation: the runner and its
        descendants, and anything in its session)."""
        out = []
        if self.kind == "bubblewrap":
            if self.ns is None:
                return []
            for name in os.listdir("/proc"):
                if name.isdigit():
                    try:
                        if os.readlink("/proc/%s/ns/pid" % name) == self.ns and not _zombie(name):
                            out.append(int(name))
                    except OSError:
                        pass
            return out
        if self.leader is None:
            return []
        parents, sessions = {}, {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % name, "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                if fields[0] == b"Z":
                    continue
                parents[int(name)] = int(fields[1])
                sessions[int(name)] = int(fields[3])
            except (OSError, IndexError, ValueError):
                pass
        keep = {self.leader}
        changed = True
        while changed:
            changed = False
            for pid, ppid in parents.items():
                if pid not in keep and (ppid in keep or sessions.get(pid) == self.leader):
                    keep.add(pid)
                    changed = True
        return sorted(p for p in keep if p in parents)

    def signal_all(self, sig, spare=()):
        sent = 0
        for pid in self.members():
            if pid in spare:
                continue
            try:
                os.kill(pid, sig)
                sent += 1
            except OSError:
                pass
        return sent

    def freeze(self, spare=()):
        """Stops every process of the sandbox; remembers them, since none can start while all are
        stopped, so thaw() need not look again."""
        self._frozen = [p for p in self.members() if p not in spare]
        for pid in self._frozen:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass

    def thaw(self, spare=()):
        pids = self._frozen if self._frozen is not None else [p for p in self.members() if p not in spare]
        self._frozen = None
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass

    def kill_except_leader(self, timeout=5.0):
        """Every process but the runner itself (and bubblewrap's init) dies; True when none is left.
        Loops because a process may fork while being killed."""
        spare = {self.leader, self.init_pid}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.signal_all(signal.SIGKILL, spare) == 0:
                self.signal_all(signal.SIGCONT, ())
                return True
            time.sleep(0.01)
        return False

    def wipe(self, path):
        shutil.rmtree(self.host_path(path), ignore_errors=True)

    def stop(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.top is not None:
            self.top.kill(10.0)       # every process of the sandbox, whatever it did to hide
            self.top.remove()
            self.groups.clear()
            self.top = self.group = None
        if self.proc is not None:
            self.signal_all(signal.SIGKILL)
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.SubprocessError):
                pass
            self.proc = None
        shutil.rmtree(self.root, ignore_errors=True)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        _unlink(path)


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def file_tail(path, limit):
    """The last `limit` bytes of a log file as text ("" when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _zombie(pid):
    try:
        with open("/proc/%s/stat" % pid, "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True
