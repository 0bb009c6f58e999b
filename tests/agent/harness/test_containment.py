"""Containment (issue 39): the judge sees, stops and kills every process a kernel makes, nothing of one
bench reaches the next, shared memory and files are bounded, and a kernel's text is data. Each
family has an attack in cheaters/ that today's judge (before this file) let through."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

from harnesstest import CHEATERS, PYDIR, STARTERS, run

from harness.runners import pool
from harness.isolation import cgroup, sandbox, textsafe
from harness.ipc import shm

# Every cheater this module uses (test_anticheat checks that each file of cheaters/ is used).
USED = {"zombie_helper.py", "nested_namespace.py", "hiding_runner.py", "rewrite_next.py", "shrink_arena.py",
        "shm_hog.py", "thread_flood.py", "read_host_files.py", "plant_file.py", "find_planted.py",
        "fill_scratch.py", "control_text.py", "ipc_plant.py", "ipc_find.py"}


def _alive_with(marker):
    """Host tids of live (not zombie) threads whose command line holds marker."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            tids = os.listdir("/proc/%s/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%s/task/%s/cmdline" % (pid, tid), "rb") as f:
                    if marker.encode() not in f.read():
                        continue
                with open("/proc/%s/task/%s/stat" % (pid, tid), "rb") as f:
                    if f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                        continue
                found.append(int(tid))
            except OSError:
                pass
    return found


def _kill_all(marker):
    """Cleanup after a failed assertion, so that a survivor does not slow the tests after it."""
    for tid in _alive_with(marker):
        try:
            os.kill(tid, signal.SIGKILL)
        except OSError:
            pass


class _Env:
    """Environment variables for one block, with fresh sandboxes before and after."""

    def __init__(self, **env):
        self.env = env

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        pool.shutdown()
        cgroup.reset()
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        pool.shutdown()
        cgroup.reset()


def _isolation():
    return pool.isolation("cpu")


def _need_cgroup(test):
    """Without a writable cgroup these attacks are not defended (docs/harness.md, the result's
    cgroup_warning says so): CI runs as root with one."""
    if not cgroup.layout().usable:
        test.skipTest("no writable cgroup here (%s): not defended, and said so" % cgroup.layout().why)


def _bwrap_has(option):
    bwrap, _ = sandbox.find_bwrap()
    if not bwrap:
        return False
    out = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=30)
    return option in out.stdout


class Processes(unittest.TestCase):
    """Processes the judge could not see: a thread group whose main thread exited (a zombie leader
    with a live thread), a helper in a nested user + PID namespace."""

    def _no_survivor(self, name, marker):
        try:
            r = run(os.path.join(CHEATERS, name))
            self.assertIn(r["status"], ("ok", "incorrect"), r["failure"])
            self.assertEqual(_alive_with(marker), [], "%s left a process running after its bench" % name)
        finally:
            _kill_all(marker)

    def test_a_helper_whose_main_thread_exited_dies_with_the_bench(self):
        _need_cgroup(self)
        self._no_survivor("zombie_helper.py", "ak-zombie-helper-marker")

    def test_a_helper_in_a_nested_namespace_dies_with_the_bench(self):
        self._no_survivor("nested_namespace.py", "ak-nested-namespace-marker")

    def test_no_nested_user_namespace_inside_the_sandbox(self):
        bwrap, _ = sandbox.find_bwrap()
        if not bwrap or not sandbox.probe(bwrap, "cpu")[0]:
            self.skipTest("bubblewrap does not run here")
        sb = sandbox.Sandbox("cpu", "zygote", PYDIR)
        try:
            if not sb.no_userns:
                self.skipTest("this bubblewrap cannot refuse nested user namespaces: %s" % sb.hardening)
            root = sb.root
            argv = sandbox.bwrap_argv(bwrap, root, "cpu", {"PATH": sandbox.SAFE_PATH}, root + "/z", PYDIR,
                                      scratch_mb=16, scratch_dirs=[root + "/z"], no_userns=True)
            i = argv.index("--info-fd")
            del argv[i:i + 2]
            code = ("import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                    "sys.exit(0 if libc.unshare(0x10000000) != 0 else 3)")
            out = subprocess.run(argv + [sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, "unshare(CLONE_NEWUSER) succeeded inside: %s" % out.stderr[-300:])
        finally:
            sb.stop()

    def test_freezing_a_group_stops_every_thread_of_a_hidden_process(self):
        # A process whose main thread exited spins in another thread; frozen through its cgroup, its
        # CPU time stops growing (no timing bound: a frozen thread gets no time at all).
        tested = []
        for kind in ("v2", "v1"):
            with self.subTest(cgroup=kind), _Env(AUTOKERNEL_CGROUP=kind):
                lay = cgroup.layout()
                if not lay.usable or lay.kill[0] != kind:
                    continue
                tested.append(kind)
                g = cgroup.Group.create(lay, "freeze-test-%d" % os.getpid())
                helper = ("import ctypes, platform, threading\n"
                          "def spin():\n    x = 0\n    while True:\n        x += 1\n"
                          "threading.Thread(target=spin).start()\n"
                          "ctypes.CDLL(None).syscall({'aarch64': 93}.get(platform.machine(), 60), 0)\n")
                started = threading.Event()
                p = subprocess.Popen([sys.executable, "-c", helper],
                                     preexec_fn=lambda: g.add(os.getpid()))
                try:
                    deadline = time.monotonic() + 30
                    while time.monotonic() < deadline and not started.is_set():
                        if self._cpu_ticks(g) > 5:      # the spinning thread runs
                            started.set()
                        time.sleep(0.05)
                    self.assertTrue(started.is_set())
                    self.assertTrue(g.freeze())
                    before = self._cpu_ticks(g)
                    time.sleep(0.3)
                    self.assertEqual(self._cpu_ticks(g), before)
                    self.assertTrue(g.kill())
                    p.wait()
                    self.assertTrue(g.empty())
                finally:
                    p.kill()
                    p.wait()
                    g.kill(5)
                    g.remove()
        if not tested:
            self.skipTest("no writable cgroup here")

    @staticmethod
    def _cpu_ticks(group):
        total = 0
        for tid in group.pids():
            try:
                with open("/proc/%d/stat" % tid, "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                pass
        return total

    def test_without_cgroups_the_result_says_so(self):
        with _Env(AUTOKERNEL_CGROUP="none"):
            r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        iso = r["isolation"]
        self.assertIsNone(iso["cgroup"])
        self.assertIn("no writable cgroup", iso["cgroup_warning"])
        self.assertIn("no writable cgroup", iso["weaker_because"])


class HidingRunner(unittest.TestCase):
    def test_a_runner_the_judge_cannot_find_is_the_kernels_failure(self):
        r = run(os.path.join(CHEATERS, "hiding_runner.py"))
        self.assertNotEqual(r["status"], "ok", "a hidden runner was timed: %s" % r.get("timing", {}).get("outputs"))
        self.assertFalse(r.get("environment_error"))
        self.assertIn("could not be found", r["failure"])


class AcrossBenches(unittest.TestCase):
    def test_a_survivor_cannot_rewrite_the_next_kernel(self):
        _need_cgroup(self)
        try:
            r = run(os.path.join(CHEATERS, "rewrite_next.py"))
            self.assertIn(r["status"], ("ok", "incorrect"), r["failure"])
            for _ in range(2):
                r = run(os.path.join(CHEATERS, "zeros.py"))
                self.assertEqual(r["status"], "incorrect", "a kernel returning zeros was judged correct")
                self.assertIn("outside tolerance", r["failure"])
            self.assertEqual(_alive_with("ak-rewrite-next-marker"), [])
        finally:
            _kill_all("ak-rewrite-next-marker")

    def test_each_candidate_gets_a_fresh_scratch(self):
        if not _bwrap_has("--size"):
            self.skipTest("no bubblewrap with --size (0.5+) here")
        r = run(os.path.join(CHEATERS, "plant_file.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        r = run(os.path.join(CHEATERS, "find_planted.py"))
        self.assertIn("find_planted found []", r["failure"])


    def test_no_system_v_segment_reaches_the_next_kernel(self):
        r = run(os.path.join(CHEATERS, "ipc_plant.py"))
        self.assertIn(r["status"], ("ok", "incorrect"), r["failure"])
        r = run(os.path.join(CHEATERS, "ipc_find.py"))
        self.assertIn("ipc_find found nothing", r["failure"])


class SharedMemory(unittest.TestCase):
    def test_the_arena_is_sealed(self):
        a = shm.CpuArena(4096)
        try:
            for size in (0, 1 << 30):
                with self.assertRaises(PermissionError):
                    os.ftruncate(a.fd, size)
            a.tensor(0, [16], __import__("torch").float32).fill_(1.0)     # still the judge's to use
        finally:
            a.close()

    def test_a_kernel_cannot_shrink_the_judges_memory(self):
        # In a process of its own: a judge that lets the arena shrink dies of SIGBUS.
        code = ("import json, sys\nsys.path.insert(0, %r)\nfrom harness import bench\n"
                "r = bench.run({'kernel_path': %r, 'device': 'cpu', 'quick': True})\n"
                "print(json.dumps({'status': r['status'], 'failure': r['failure']}))\n"
                % (PYDIR, os.path.join(CHEATERS, "shrink_arena.py")))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, "the judge died (%d): %s" % (out.returncode, out.stderr[-500:]))
        r = json.loads(out.stdout.strip().splitlines()[-1])
        # (quick timing of a µs-scale softmax may say "no longer than calls that do no work" on a
        # loaded machine: what matters is that the judge lived and the kernel computed)
        self.assertIn(r["status"], ("ok", "incorrect"), r["failure"])
        self.assertNotIn("outside tolerance", r["failure"])

    def test_shared_memory_counts_against_the_memory_limit(self):
        with _Env(AUTOKERNEL_SANDBOX_MEMORY_MB="1024"):
            if not cgroup.layout().memory:
                self.skipTest("no writable memory cgroup here: %s" % cgroup.layout().why)
            r = run(os.path.join(CHEATERS, "shm_hog.py"))
        self.assertNotEqual(r["status"], "ok", "1.5 GiB of shared memory under a 1 GiB limit")
        self.assertIn("memory limit", r["failure"])


class Limits(unittest.TestCase):
    def test_tasks_are_limited(self):
        with _Env(AUTOKERNEL_SANDBOX_PIDS="128"):
            if not cgroup.layout().pids:
                self.skipTest("no writable pids cgroup here: %s" % cgroup.layout().why)
            r = run(os.path.join(CHEATERS, "thread_flood.py"))
        self.assertIn("thread_flood started", r["failure"])
        started = int(r["failure"].split("thread_flood started ")[1].split()[0])
        self.assertLess(started, 128)

    def test_the_scratch_is_size_capped(self):
        with _Env(AUTOKERNEL_SANDBOX_SCRATCH_MB="64"):
            r = run(os.path.join(CHEATERS, "fill_scratch.py"))
        if not _bwrap_has("--size"):
            self.skipTest("no bubblewrap with --size (0.5+) here")
        self.assertIn("fill_scratch wrote", r["failure"])
        wrote = int(r["failure"].split("fill_scratch wrote ")[1].split()[0])
        self.assertLessEqual(wrote, 64)


class Files(unittest.TestCase):
    def test_host_secrets_are_not_readable(self):
        r = run(os.path.join(CHEATERS, "read_host_files.py"))
        self.assertIn("read_host_files read []", r["failure"])


class Text(unittest.TestCase):
    def test_control_characters_never_leave_the_judge(self):
        r = run(os.path.join(CHEATERS, "control_text.py"))
        self.assertEqual(r["status"], "incorrect", r["failure"])
        strings = []

        def walk(o):
            if isinstance(o, str):
                strings.append(o)
            elif isinstance(o, dict):
                for k, v in o.items():
                    walk(k)
                    walk(v)
            elif isinstance(o, list):
                for v in o:
                    walk(v)
        walk(r)
        text = "".join(strings)
        for bad in ("\x1b", "\x07", "\x9b", "\r", "\u202e", "\u202c", "\u2066", "\u2069"):
            self.assertNotIn(bad, text, repr(bad))
        self.assertIn("owned", r["failure"])            # the text is kept, its controls are not

    def test_clean(self):
        self.assertEqual(textsafe.clean("a\x1b[31mb\tc\nd\u202ee\x00"), "a[31mb\tc\nde")


if __name__ == "__main__":
    unittest.main()
