"""The judge out of the kernel's reach: attacks written against the in-process judge (commit 803822b
accepted most of them, see docs/harness.md and tests/bench/attacks_vs_judge.py), the damage a kernel
could do, and the sandbox's own guarantees."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from harnesstest import CHEATERS, PYDIR, ROOT, STARTERS, run

from harness.runners import pool

import test_containment

# Each rejected: it returns a wrong answer that reached the truth, rewrote or fooled the judge in
# its old home, or ended its own process.
REJECTED = {
    "gc_truth.py": "outside tolerance",
    "stack_truth.py": "outside tolerance",
    "poison_truth.py": "outside tolerance",
    "code_swap.py": "outside tolerance",
    "class_patch.py": "NaN",
    "clear_snapshot.py": "outside tolerance",
    "trace_locals.py": "outside tolerance",
    "lying_tensor.py": "expected a plain torch.Tensor",
    "lazy_tensor.py": "expected a plain torch.Tensor",
    "checked_flag.py": "timed call",
    "late_rounds.py": "timed call",
    "system_exit.py": "kernel_fn raised SystemExit",
    "keyboard_interrupt.py": "kernel_fn raised KeyboardInterrupt",
}
# Computing honestly while trying to bend the clock or the baseline: measured as what they are.
NO_GAIN = ("ctypes_timer.py", "slow_reference.py", "fingerprint_cache.py", "knows_timed_calls.py",
           "signal_reference.py", "direct_output.py", "refuse_reading.py")
HONEST_BAND = 1.6       # the reference against itself lands in 0.8-1.3 on two shared cores
# Every file of cheaters/ this module uses (test_anticheat checks that each file is used somewhere).
COVERED = set(REJECTED) | set(NO_GAIN) | {
    "os_exit.py", "leak_secret.py", "escape_daemon.py", "write_files.py", "zeros.py", "poison_next.py",
    "memory_hog.py", "forge_reply.py"} | test_containment.USED


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Attacks(unittest.TestCase):
    def bench(self, name, **args):
        return run(os.path.join(CHEATERS, name), **args)

    def test_rejected(self):
        for name, needle in sorted(REJECTED.items()):
            with self.subTest(attack=name):
                r = self.bench(name)
                self.assertEqual(r["status"], "incorrect", r["failure"])
                self.assertIn(needle, r["failure"])
                self.assertNotIn("latency_us", r)
                self.assertFalse(r.get("environment_error"), r["failure"])

    def test_no_gain(self):
        for name in NO_GAIN:
            with self.subTest(attack=name):
                r = self.bench(name)
                self.assertFalse(r.get("environment_error"), r["failure"])
                if r["status"] == "ok":          # (a signal storm may also kill its own process)
                    self.assertLess(r["speedup"], HONEST_BAND, "%s measured %.2fx" % (name, r["speedup"]))

    def test_no_clock_holds_a_copy_of_the_output(self):
        # A copy into the judge's region inside the clock is what direct_output.py skipped (the null
        # rounds paid it): an honest kernel's outputs are read from the stopped process instead, and
        # the null kernel's calls cost only the runner's own call (it was ~250 us with the copy of a
        # 2 MB output). direct_output.py still writes into the region, which now gains it nothing
        # (NO_GAIN) and is said.
        # The null rounds' time is a measurement: on a busy host one bench can see them slow, so
        # the best of three benches is compared (a copy inside the null rounds slows all three).
        ratios = []
        for _ in range(3):
            r = run(os.path.join(STARTERS, "cpu", "silu.py"))
            self.assertEqual(r["status"], "ok", r["failure"])
            self.assertEqual(r["timing"]["outputs"], "read from the kernel's stopped process")
            ratios.append(r["timing"]["null_us"] / r["latency_us"])
            if ratios[-1] < 0.5:
                break
        self.assertLess(min(ratios), 0.5, ratios)
        r = self.bench("direct_output.py")
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertIn("copied into the judge's region by the kernel's process", r["timing"]["outputs"])
        # Nor can a kernel talk the judge back into copies: a bad address in the first held output
        # is not a refusal of the right to read its process.
        r = self.bench("refuse_reading.py")
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["timing"]["outputs"], "read from the kernel's stopped process")

    def test_ending_the_process_is_the_kernels_crash(self):
        r = self.bench("os_exit.py")
        self.assertEqual(r["status"], "crash")
        self.assertIn("the kernel's process exited", r["failure"])
        self.assertFalse(r.get("environment_error"))
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"))       # the next bench is unaffected
        self.assertEqual(r["status"], "ok", r["failure"])


class Damage(unittest.TestCase):
    def test_no_secret_reaches_the_kernel(self):
        os.environ["OPENAI_API_KEY"] = "sk-isolation-test-4242424242"
        os.environ["HF_TOKEN"] = "hf-isolation-test-4242424242"
        try:
            pool.shutdown()           # sandboxes started before the variables existed would prove nothing
            r = run(os.path.join(CHEATERS, "leak_secret.py"))
        finally:
            del os.environ["OPENAI_API_KEY"], os.environ["HF_TOKEN"]
        self.assertEqual(r["status"], "incorrect")
        self.assertIn("environment: {}", r["failure"])
        self.assertNotIn("isolation-test-4242", json.dumps(r))

    def test_nothing_outlives_the_bench(self):
        r = run(os.path.join(CHEATERS, "escape_daemon.py"))
        self.assertIn(r["status"], ("ok", "incorrect"), r["failure"])   # see the spare tests below
        alive = []
        for pid in os.listdir("/proc"):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if b"ak-escape-daemon-marker" in f.read():
                        alive.append(pid)
            except OSError:
                pass
        self.assertEqual(alive, [])

    def test_no_file_written_outside_the_scratch_directory(self):
        marker = "ak-write-files-marker.txt"
        places = [os.path.expanduser("~"), os.getcwd(), "/tmp", CHEATERS]
        compare = os.path.join(PYDIR, "harness", "checks", "compare.py")
        before = _sha(compare)
        r = run(os.path.join(CHEATERS, "write_files.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        for d in places:
            self.assertFalse(os.path.exists(os.path.join(d, marker)), d)
        self.assertEqual(_sha(compare), before)
        r = run(os.path.join(CHEATERS, "zeros.py"))
        self.assertEqual(r["status"], "incorrect")

    def test_a_kernel_cannot_poison_the_next_bench(self):
        r = run(os.path.join(CHEATERS, "poison_next.py"))
        self.assertEqual(r["status"], "ok", r["failure"])   # its own output is correct
        r = run(os.path.join(CHEATERS, "zeros.py"))
        self.assertEqual(r["status"], "incorrect")
        self.assertIn("outside tolerance", r["failure"])

    def test_memory_is_limited(self):
        os.environ["AUTOKERNEL_SANDBOX_MEMORY_MB"] = "1024"
        try:
            pool.shutdown()
            r = run(os.path.join(CHEATERS, "memory_hog.py"))
            self.assertEqual(r["isolation"]["memory_limit_mb"], 1024)
        finally:
            del os.environ["AUTOKERNEL_SANDBOX_MEMORY_MB"]
            pool.shutdown()
        self.assertEqual(r["status"], "incorrect", r["failure"])
        self.assertIn("can't allocate memory", r["failure"])


class ForgedReply(unittest.TestCase):
    def test_the_worker_client_gets_the_judges_reply(self):
        worker_dir = tempfile.mkdtemp()
        try:
            shutil.copy(os.path.join(ROOT, "core", "python", "akworker.py"), worker_dir)
            shutil.copytree(os.path.join(PYDIR, "harness"), os.path.join(worker_dir, "harness"))
            p = subprocess.Popen([sys.executable, "-u", os.path.join(worker_dir, "akworker.py")],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            try:
                self.assertEqual(json.loads(p.stdout.readline())["event"], "ready")
                request = {"id": 7, "op": "bench", "args": {"kernel_path": os.path.join(CHEATERS, "forge_reply.py"),
                                                            "device": "cpu", "quick": True}}
                p.stdin.write(json.dumps(request) + "\n")
                p.stdin.flush()
                while True:
                    reply = json.loads(p.stdout.readline())
                    if reply.get("id") == 7 and "ok" in reply:
                        break
            finally:
                p.kill()
                p.communicate()
        finally:
            shutil.rmtree(worker_dir, ignore_errors=True)
        self.assertTrue(reply["ok"])
        self.assertNotIn("forged", reply["result"])
        self.assertEqual(reply["result"]["status"], "incorrect")


class TritonSeed(unittest.TestCase):
    def test_each_candidate_gets_its_own_copy(self):
        # The driver utilities are copied into every candidate's fresh cache from the zygote's
        # memory: what one candidate does to its copy is gone with its directory.
        from harness.runners import runner
        seed = {"abc/cuda_utils.so": b"\x7fELF trusted", "abc/__grp__cuda_utils.json": b"{}"}
        tmp = tempfile.mkdtemp()
        try:
            first, second = os.path.join(tmp, "c-1"), os.path.join(tmp, "c-2")
            for cwd in (first, second):
                os.makedirs(os.path.join(cwd, "triton"))
            runner._plant_seed(seed, first)
            with open(os.path.join(first, "triton", "abc", "cuda_utils.so"), "wb") as f:
                f.write(b"planted by a kernel")
            shutil.rmtree(first)
            runner._plant_seed(seed, second)
            with open(os.path.join(second, "triton", "abc", "cuda_utils.so"), "rb") as f:
                self.assertEqual(f.read(), b"\x7fELF trusted")
            self.assertEqual(sorted(os.listdir(os.path.join(second, "triton", "abc"))),
                             ["__grp__cuda_utils.json", "cuda_utils.so"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class SpareRunner(unittest.TestCase):
    """The next candidate's process is forked ahead of its bench and adopted by it (on by default
    for CUDA only; forced on here to test it on the CPU): beside the kernel, in the other candidate
    sandbox, where bubblewrap gives two; after the kernel is dead otherwise."""

    def setUp(self):
        self.saved = pool.SPARE_DEVICES
        pool.SPARE_DEVICES = ("cpu",)
        pool.shutdown()

    def tearDown(self):
        pool.SPARE_DEVICES = self.saved
        pool.shutdown()

    def _both_sandboxes_up(self):
        from harness.bench import WORKER_DIR
        sbs = [pool._sandbox("cpu", role, WORKER_DIR) for role in pool.CANDIDATE_ROLES]
        if any(sb.kind != "bubblewrap" for sb in sbs):
            self.skipTest("bubblewrap does not run here: one PID namespace for every candidate")
        return sbs

    def test_spare_is_forked_beside_the_kernel_in_the_other_sandbox(self):
        self._both_sandboxes_up()
        forks = []
        fork = pool._fork
        pool._fork = lambda sb, d: forks.append(sb.role) or fork(sb, d)
        try:
            r = run(os.path.join(CHEATERS, "escape_daemon.py"))
            # On a loaded 2-core machine quick timing can reject this µs-scale kernel ("no longer
            # than calls that do no work"); where the processes ran is what this test is about.
            self.assertIn(r["status"], ("ok", "incorrect"), r["failure"])
            kernel_role, spare_role = forks         # the kernel's own process, then the spare
            self.assertNotEqual(kernel_role, spare_role)
            sb, (cwd, _, ns_pid) = pool._spares["cpu"]
            self.assertEqual(sb.role, spare_role)
            # The daemon lived in the other PID namespace and died with its kernel; the spare's
            # sandbox holds its init, its zygote and the spare.
            members = set(sb.members())
            self.assertEqual(len(members - {sb.init_pid, sb.leader}), 1, members)
            kernel_sb = pool._sandboxes[("cpu", kernel_role)]
            self.assertEqual(set(kernel_sb.members()), {kernel_sb.init_pid, kernel_sb.leader})
            r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        finally:
            pool._fork = fork
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(forks[2:], [kernel_role])  # adopted the spare, forked the next one beside it
        self.assertFalse(os.path.isdir(cwd))        # the adopted spare's files went with its bench
        self.assertNotEqual(pool._spares["cpu"][1][2], ns_pid)

    def test_one_sandbox_forks_the_spare_after_the_kernel_is_dead(self):
        beside = pool.Candidate._fork_spare_beside
        pool.Candidate._fork_spare_beside = lambda self: None
        try:
            r = run(os.path.join(CHEATERS, "escape_daemon.py"))
            self.assertIn(r["status"], ("ok", "incorrect"), r["failure"])
            sb, (cwd, _, ns_pid) = pool._spares["cpu"]
            self.assertEqual(sb.role, "candidate")
            # Nothing of the kernel lives beside the spare: the sandbox holds its init, the zygote, the spare.
            members = set(sb.members()) - {sb.init_pid}
            self.assertEqual(len(members - {sb.leader}), 1, members)
            r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        finally:
            pool.Candidate._fork_spare_beside = beside
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertFalse(os.path.isdir(cwd))
        self.assertNotEqual(pool._spares["cpu"][1][2], ns_pid)

    def test_a_dead_spare_is_replaced_not_blamed_on_the_kernel(self):
        self._both_sandboxes_up()
        run(os.path.join(STARTERS, "cpu", "softmax.py"))
        sb, (_, conn, _) = pool._spares["cpu"]
        conn.close()                             # as if the spare had died
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertIn("cpu", pool._spares)

    def test_the_spare_is_warm_before_the_timing_starts(self):
        self._both_sandboxes_up()
        settled = []
        settle = pool.Candidate.settle_spare
        pool.Candidate.settle_spare = lambda c, d: settled.append("cpu" in pool._spares) or settle(c, d)
        try:
            r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        finally:
            pool.Candidate.settle_spare = settle
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(settled, [True])       # the timing waited on a spare that already existed

    def test_a_kernel_cannot_poison_the_spare(self):
        r = run(os.path.join(CHEATERS, "poison_next.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        r = run(os.path.join(CHEATERS, "zeros.py"))
        self.assertEqual(r["status"], "incorrect")
        self.assertIn("outside tolerance", r["failure"])


class Sandbox(unittest.TestCase):
    def test_isolation_is_reported(self):
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        iso = r["isolation"]
        self.assertIn(iso["sandbox"], ("bubblewrap", "process"))
        if shutil.which("bwrap"):
            self.assertEqual(iso["sandbox"], "bubblewrap", iso)
            self.assertTrue(iso["pid_namespace"])
            self.assertFalse(iso["network"])

    def test_without_bubblewrap_the_result_says_so(self):
        os.environ["AUTOKERNEL_BWRAP"] = "none"
        try:
            pool.shutdown()
            r = run(os.path.join(STARTERS, "cpu", "softmax.py"))
        finally:
            del os.environ["AUTOKERNEL_BWRAP"]
            pool.shutdown()
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["isolation"]["sandbox"], "process")
        self.assertIn("AUTOKERNEL_BWRAP=none", r["isolation"]["weaker_because"])
        r = run(os.path.join(CHEATERS, "gc_truth.py"))           # still out of reach of the judge
        self.assertEqual(r["status"], "incorrect")

    def test_private_shm_only_where_asked(self):
        """verify's model runner gets a writable /dev/shm of its own (torch.compile's worker pool needs
        multiprocessing's locks); candidates keep a read-only one; neither reaches the host's."""
        from harness.isolation import sandbox
        bwrap, _ = sandbox.find_bwrap()
        if not bwrap or not sandbox.probe(bwrap, "cpu")[0]:
            self.skipTest("bubblewrap does not run here")
        marker = "ak-test-shm-%d" % os.getpid()
        code = ("import multiprocessing, sys\n"
                "try:\n    multiprocessing.Lock()\nexcept OSError as e:\n    sys.exit('lock: %%s' %% e)\n"
                "open('/dev/shm/%s', 'w').write('x')\n" % marker)
        root = tempfile.mkdtemp()
        try:
            for private, ok in ((False, False), (True, True)):
                argv = sandbox.bwrap_argv(bwrap, root, "cpu", {"PATH": sandbox.SAFE_PATH}, root, root,
                                          private_shm=private)
                i = argv.index("--info-fd")
                del argv[i:i + 2]
                out = subprocess.run(argv + [sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
                self.assertEqual(out.returncode == 0, ok, (private, out.stderr[-500:]))
                if not ok:
                    self.assertIn("Read-only", out.stderr)
            self.assertFalse(os.path.exists("/dev/shm/" + marker))
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()


class SourceInTheRequest(unittest.TestCase):
    """A worker behind a launcher shares no disk: the kernel's bytes come in the request."""

    def test_the_sent_source_is_judged_not_the_path(self):
        import base64
        with open(os.path.join(STARTERS, "cpu", "softmax.py"), "rb") as f:
            honest = f.read()
        missing = "/nonexistent/far/side/kernel.py"
        r = run(missing, kernel_source_b64=base64.b64encode(honest).decode())
        self.assertEqual(r["status"], "ok", r["failure"])
        # What is judged is what was sent, even where a file of that name exists with other bytes.
        with open(os.path.join(CHEATERS, "zeros.py"), "rb") as f:
            zeros = f.read()
        r = run(os.path.join(STARTERS, "cpu", "softmax.py"), kernel_source_b64=base64.b64encode(zeros).decode())
        self.assertEqual(r["status"], "incorrect")
        r = run(missing, kernel_source_b64="not base64!")
        self.assertEqual(r["status"], "error")
        self.assertIn("kernel_source_b64", r["failure"])
