"""The timing stage, judged from outside the kernel's process.

Three runners take turns in rounds, in rotating order: the candidate (C), the reference (R, a
process no candidate ever touched) and a null kernel that does no work (N, in the reference's
process). A round is B calls on B input slots in shared memory; the judge's clock (perf_counter_ns
in this process) runs from the request to the reply, which the runner sends after synchronising
the device. latency = median(C) - median(N) per call; the reference's likewise.

Every timed call gets fresh inputs: before each round the judge writes into every slot a window at
a secret random offset of a pool of pre-generated data, so no input repeats (caching by address or
by a fingerprint of a few elements returns a stale result) and nothing marks one call as special.
After the candidate's round its process is stopped (SIGSTOP on every process of its sandbox), so
nothing it left running can work outside the clock or slow the reference down; then the outputs of
randomly chosen calls (and the last call) are copied and later compared with the reference on the
very same inputs: the first calls, and a uniform sample of every timed call of the stage (a
reservoir), so no round, early or late, is safe from a check. On CUDA the judge flushes L2 before every round, and after each candidate round
checks that the GPU is idle (work left queued by the candidate would delay a tiny probe kernel)
and that the checked outputs do not change afterwards.
"""

import gc
import os
import random
import time

import torch

from ..checks import compare, plan
from ..ipc import bits, procmem
from ..runners.caller import KernelFault, KernelRaised, layout, output_desc, output_view, read_output
from .stats import L2_FLUSH_BYTES, median, noise_pct, summarize

MAX_CHECKS = 14
POOL_SETS = 3
GPU_IDLE_LIMIT_US = 500.0      # a tiny kernel takes a few us on an idle GPU; a busy context, a timeslice

BUDGETS = {  # per device and mode: target length of one round, timing budget (all sides), rounds
    ("cpu", True): {"round_s": 0.006, "budget_s": 0.7, "min_rounds": 5, "warmup": 1},
    ("cpu", False): {"round_s": 0.006, "budget_s": 3.0, "min_rounds": 10, "warmup": 2, "settled_pct": 1.0},
    ("cuda", True): {"round_s": 0.002, "budget_s": 0.6, "min_rounds": 8, "warmup": 2},
    ("cuda", False): {"round_s": 0.004, "budget_s": 2.0, "min_rounds": 16, "warmup": 3, "settled_pct": 1.0},
}
# A full bench stops timing before its budget once both medians are known to settled_pct (standard
# error of the median, kernel and reference alike) and enough timed calls were checked: a steady
# kernel needs a fraction of the budget, and the budget was most of what isolation added to a
# bench on the H200 (docs/benchmarks.md). Quick benches are short already.
SETTLED_MIN_CHECKS = MAX_CHECKS // 2
MAX_SLOTS = 32      # CUDA: up to 128, a round of tiny kernels must outlast its overheads
BATCHED_FILL_BYTES = 64 << 20
HEAP_SPARE_BYTES = 256 << 20    # CUDA: the heap's room for a kernel's temporaries beside two rounds' outputs


def slot_bytes(case):
    return layout(0, case.inputs, case.out_nbytes())[2]


def slot_count(case, device):
    """How many input slots the timing region holds (memory-bounded). A round is at most this many
    calls, and the judge's clock around it carries a fixed cost (two messages, a wake-up): the
    more calls a round holds, the less that cost weighs. AUTOKERNEL_TIMING_MAX_SLOTS raises the
    cap, and the memory budget with it (for side-by-side measurements)."""
    per = max(1, slot_bytes(case))
    cap = MAX_SLOTS * (4 if device == "cuda" else 1)
    cap_env = os.environ.get("AUTOKERNEL_TIMING_MAX_SLOTS", "")
    scale = max(1.0, int(cap_env) / cap) if cap_env.isdigit() and int(cap_env) > 0 else 1.0
    budget = int(((8 << 30) if device == "cuda" else (1 << 30)) * scale)
    return int(max(2, min(int(cap * scale), budget // per)))


class Pools:
    """Per argument, a flat pool of POOL_SETS inputs drawn like the case's; windows at random offsets."""

    def __init__(self, spec, case, device, rng):
        sets = []
        for _ in range(POOL_SETS):
            gen = plan.gen_inputs.generator(device, rng.getrandbits(62))
            with torch.no_grad():
                sets.append(spec.make_inputs(case.size, case.torch_dtype, device, gen, case.dist))
        self.shapes = [tuple(t.shape) for t in sets[0]]
        self.pools = [torch.cat([s[i].reshape(-1) for s in sets]) for i in range(len(sets[0]))]
        self.rng = rng

    def draw(self):
        return [self.rng.randrange(0, p.numel() - _numel(s) + 1) for p, s in zip(self.pools, self.shapes)]

    def inputs(self, offsets):
        return tuple(p[o:o + _numel(s)].view(s) for p, o, s in zip(self.pools, offsets, self.shapes))


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class Slots:
    def __init__(self, arena, base, case, count):
        self.arena, self.specs, self.outs = arena, [], []
        at = base
        for _ in range(count):
            specs, out, end = layout(at, case.inputs, case.out_nbytes())
            self.specs.append(specs)
            self.outs.append(out)
            at = end
        self.end = at
        self.offsets = [None] * count

    def binds(self, count):
        return [{"id": k, "inputs": self.specs[k], "out": list(self.outs[k])} for k in range(count)]

    def fill(self, pools, count):
        """Fresh windows into every slot. On CUDA, slots are equally spaced, so one argument's
        windows of all slots are a strided view of the arena: written by one gather and one copy
        instead of one copy per slot (on the H200, 128 slots' copies were launch-bound and took
        longer than the round they feed). Large inputs, where the gather's temporary would cost
        memory, go slot by slot, and so does the CPU, where a copy is no launch and torch.stack of
        pool windows is slow (1.13, one thread: 240 ms for 32 windows of 2 MB, against 6 ms for 32
        copies; the fills then took most of the timing budget)."""
        offsets = [pools.draw() for _ in range(count)]
        stride = self.specs[1][0][0] - self.specs[0][0][0] if len(self.specs) > 1 else 0
        batched = getattr(self.arena, "device", "cpu") == "cuda"
        for i, pool in enumerate(pools.pools):
            base, shape, _ = self.specs[0][i]
            n, size = _numel(shape), pool.element_size()
            if batched and count > 1 and stride % size == 0 and count * n * size <= BATCHED_FILL_BYTES:
                windows = torch.stack([pool[o[i]:o[i] + n] for o in offsets[:count]])
                column = self.arena.tensor(base, [((count - 1) * stride) // size + n], pool.dtype)
                column.as_strided((count, n), (stride // size, 1)).copy_(windows)
                continue
            for k in range(count):
                offset, kshape, _ = self.specs[k][i]
                self.arena.tensor(offset, kshape, pool.dtype).copy_(pool[offsets[k][i]:offsets[k][i] + n].view(kshape))
        self.offsets[:count] = offsets


class _Gpu:
    def __init__(self):
        self.flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        self.tiny = torch.empty(1024, dtype=torch.float32, device="cuda")

    def flush_l2(self):
        self.flush.zero_()
        torch.cuda.synchronize()

    def idle_probe_us(self):
        """How long a tiny kernel took between its two events, less the time this thread took to
        enqueue them. The GPU runs the start event at once on an idle device, so a pause of this
        thread between the two launches (a garbage collection, a preempted core) would read as a
        busy GPU: it was seen refusing honest kernels (2 of 15 full benches on the H200). Only the
        judge's own thread can pause here (the candidate is stopped), and work left queued by the
        candidate delays the kernel beyond anything this thread did."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        collecting = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter_ns()
            start.record()
            self.tiny.add_(1.0)
            end.record()
            host_us = (time.perf_counter_ns() - t0) / 1e3
        finally:
            if collecting:
                gc.enable()
        end.synchronize()
        return max(0.0, start.elapsed_time(end) * 1e3 - host_us)


def measure(candidate, ref_runner, reference_sb, arena, base, spec, main_case, device, quick, seed,
            deadline, progress=lambda m, f: None, min_rounds=None):
    """Returns (timing dict, checks) where checks is a list of (description, inputs, output).
    min_rounds: at least this many timed rounds (the cold re-check asks for its pairs)."""
    candidate.settle_spare(deadline)    # the next bench's process is warm before a round is timed
    threads = torch.get_num_threads()
    torch.set_num_threads(1)            # the judge's own copies must not leave threads spinning
    reference_sb.freeze()
    try:
        return _measure(candidate, ref_runner, reference_sb, arena, base, spec, main_case, device, quick,
                        seed, deadline, progress, min_rounds)
    finally:
        reference_sb.thaw()
        candidate.thaw()            # the judge talks to it again (peak memory), then kills it
        torch.set_num_threads(threads)


def _measure(candidate, ref_runner, reference_sb, arena, base, spec, main_case, device, quick, seed,
             deadline, progress, min_rounds=None):
    rng = random.Random(seed)
    budget = dict(BUDGETS[(device, bool(quick))])
    if min_rounds:
        budget["min_rounds"] = max(budget["min_rounds"], int(min_rounds))
    gpu = _Gpu() if device == "cuda" else None
    pools = Pools(spec, main_case, device, rng)
    slots = Slots(arena, base, main_case, slot_count(main_case, device))
    shape, dtype = list(main_case.truth.shape), main_case.torch_dtype
    cand = candidate.runner
    binds = slots.binds(len(slots.specs))
    reference_sb.thaw()
    for runner in (cand, ref_runner):
        reply = runner.request({"op": "run", "ids": [], "bind": binds})
        if not reply.get("ok"):
            raise KernelFault("binding the timing slots failed: %s" % reply.get("error"))
    ref_runner.request({"op": "null", "shape": shape, "dtype": str(dtype).replace("torch.", "")})
    heap, heap_why, held = _attach_heap(cand, main_case, len(slots.specs)) if device == "cuda" else \
        (None, "", True)
    reference_sb.freeze()
    candidate.freeze()

    # The outputs of a timed round stay where the kernel put them and the judge reads the checked
    # ones while its process is stopped: a copy into the arena inside the clock (which the null
    # kernel's rounds would pay as well) is a cost a kernel could skip by writing there itself. On
    # the CPU they are read from the process; on CUDA from the heap, GPU memory the judge maps too.
    hold = {"on": held, "pid": candidate.host_pid() if device == "cpu" else None,
            "why": "copied into the judge's region inside every side's clock (%s)" % heap_why if not held else ""}
    try:
        return _timed_rounds(candidate, cand, ref_runner, reference_sb, arena, spec, main_case, device,
                             quick, deadline, progress, rng, budget, gpu, pools, slots, hold, heap, heap_why)
    finally:
        if heap is not None:
            heap.close()


def _attach_heap(cand, case, slot_count_):
    """(heap arena or None, why not, whether outputs are held): the judge decides to hold a CUDA
    kernel's outputs from its own environment alone, then offers the heap; a kernel without one
    (a torch too old for a MemPool with our allocator, no GPU memory left for it, a runner that
    does not take it) copies its outputs into the judge's region at its own cost, never the null
    kernel's, so refusing gains a kernel nothing. Room for two rounds' outputs (an eager round's and
    a captured one's: the caching allocator keeps blocks per stream) and the kernel's temporaries,
    as checked on an H100 (docs/harness.md). AUTOKERNEL_TIMING_HEAP=0 times as before the heap (every side copies its outputs:
    side-by-side measurements)."""
    from ..ipc import cudashm, heap as heap_mod
    if os.environ.get("AUTOKERNEL_TIMING_HEAP", "1") == "0":
        return None, "AUTOKERNEL_TIMING_HEAP=0", False
    if not heap_mod.supported():
        return None, "this torch cannot route allocations into a pool of the judge's memory", True
    try:
        arena = cudashm.Arena((2 * slot_count_ + 2) * case.out_nbytes() + HEAP_SPARE_BYTES)
    except cudashm.CudaShmError as exc:
        return None, "no GPU memory for the heap (%s)" % exc, True
    try:
        fd = arena.export_fd()
        try:
            reply = cand.request({"op": "attach", "role": "heap", "size": arena.size}, fds=[fd])
        finally:
            os.close(fd)
    except (cudashm.CudaShmError, OSError) as exc:
        reply = {"ok": False, "error": str(exc)}
    if not reply.get("ok"):
        arena.close()
        return None, "the kernel's process did not take the heap (%s)" % reply.get("error"), True
    return arena, "", True


def _timed_rounds(candidate, cand, ref_runner, reference_sb, arena, spec, main_case, device, quick, deadline,
                  progress, rng, budget, gpu, pools, slots, hold, heap, heap_why):
    shape, dtype = list(main_case.truth.shape), main_case.torch_dtype
    where = {"held": 0, "copied": 0}      # checked outputs read where the kernel left them / copied by it
    graphs = []                 # [True] once every side's round replays as a CUDA graph
    spin = _spin_seconds(device, budget)

    phases = dict.fromkeys(("fill", "flush", "wake", "timed", "stop", "probe", "checks"), 0.0)

    def round_(side, count, extra=None):
        t = time.perf_counter_ns()
        if side != "N":         # the null kernel reads nothing: fresh inputs and a cold L2 are wasted on it
            slots.fill(pools, count)
        t_filled = time.perf_counter_ns()
        if gpu is not None and side != "N":
            gpu.flush_l2()
        t_flushed = time.perf_counter_ns()
        runner = cand if side == "C" else ref_runner
        # The reference's and the null kernel's outputs are never read while timed: on CUDA they
        # are only kept ("keep"), never copied, whatever the kernel's outputs cost to read.
        keep = hold["on"] and side != "C" and device == "cuda"
        msg = {"op": "run", "ids": list(range(count)), "hold": "keep" if keep else hold["on"]}
        if side == "N":
            msg["fn"] = "null"
        if extra:
            msg.update(extra)
        elif graphs and graphs[0]:
            msg["replay"] = True
        # Only the runner being timed may run: the other's idle threads (OpenMP spins after a
        # parallel region) would take cores from it, and the candidate must not work off the clock.
        (candidate.thaw if side == "C" else reference_sb.thaw)()
        runner.request({"op": "ping", "spin": spin})    # running again (the wake-up after SIGCONT is not its time)
        t0 = time.perf_counter_ns()
        reply = runner.request(msg, spin=spin)
        t1 = time.perf_counter_ns()
        (candidate.freeze if side == "C" else reference_sb.freeze)()
        for name, ns in (("fill", t_filled - t), ("flush", t_flushed - t_filled), ("wake", t0 - t_flushed),
                         ("timed", t1 - t0), ("stop", time.perf_counter_ns() - t1)):
            phases[name] += ns / 1e9
        if not reply.get("ok"):
            if side == "C":
                raise KernelRaised(str(reply.get("error")), bool(reply.get("fatal")))
            raise RuntimeError("the reference runner failed while timing: %s" % reply.get("error"))
        return (t1 - t0) / 1e3 / count, reply

    if hold["on"] and device == "cpu":
        # May this judge read the kernel's process at all? Only a refusal of the right to (the
        # system's ptrace policy) turns reading off: a bad address or a vanished process is the
        # kernel's doing, and must not talk the judge back into copies inside the clock.
        _, reply = round_("C", 1)
        desc = (reply.get("outs") or [{}])[0]
        if hold["pid"] is None:
            # A runner that hides (its main thread gone, a zombie leader) is the kernel's doing: the
            # clock never changes for it (copying inside the clock is what direct_output skipped).
            raise KernelFault("the kernel's process could not be found where it must be (a live process "
                              "in its sandbox and cgroup): its main thread exited or it hid itself")
        if desc.get("held") and isinstance(desc.get("ptr"), int):
            probe = torch.empty(1, dtype=torch.uint8)
            got = procmem.read(hold["pid"], desc["ptr"], probe.data_ptr(), 1)
            if got < 0 and -got in procmem.REFUSALS:
                hold.update(on=False, why="the kernel's process may not be read (%s): its outputs are copied "
                            "inside the clock" % os.strerror(-got))
    # Warm-up (compiles, caches) and the round length: B calls of the slower of kernel and reference.
    per_call = {}
    for side in ("C", "R", "N"):
        seen = [round_(side, 1)[0] for _ in range(budget["warmup"] + 1)]
        per_call[side] = min(seen[1:])          # the first call compiles, allocates, faults pages in
    slowest = max(1e-3, per_call["C"] - per_call["N"], per_call["R"] - per_call["N"], per_call["N"] / 4)
    count = int(max(1, min(len(slots.specs), round(budget["round_s"] * 1e6 / slowest))))
    for side in ("C", "R", "N"):
        round_(side, count)                     # every slot used once before anything is timed
    # On CUDA every side's round is captured as a CUDA graph and replayed; if any side cannot be
    # captured, all are timed eagerly (then per-call launch overhead is part of every number).
    why_eager = ""
    if device == "cuda":
        captured = []
        for side in ("C", "R", "N"):
            _, reply = round_(side, count, {"graph": True})
            captured.append(bool(reply.get("graph")))
            if not reply.get("graph") and not why_eager:
                why_eager = "%s: %s" % ({"C": "kernel", "R": "reference", "N": "null"}[side], reply.get("why", ""))
        graphs[:] = [all(captured)]

    samples = {"C": [], "R": [], "N": []}
    checks, idle_worst, calls, last = [], 0.0, 0, None
    sample = Reservoir(MAX_CHECKS, rng)
    orders = (("C", "R", "N"), ("R", "N", "C"), ("N", "C", "R"))
    start = time.perf_counter()
    r = 0
    settled = False
    while (r < budget["min_rounds"] or time.perf_counter() - start < budget["budget_s"]) and not deadline.expired():
        if r >= budget["min_rounds"] and _settled(samples, budget, len(checks)):
            settled = True
            break
        for side in orders[r % 3]:
            us, reply = round_(side, count)
            samples[side].append(us)
            if side != "C":
                continue
            t_checks = time.perf_counter()
            if gpu is not None:
                idle_worst = max(idle_worst, gpu.idle_probe_us())
                phases["probe"] += time.perf_counter() - t_checks
                t_checks = time.perf_counter()
            picked = []
            for k in range(count):
                entry = sample.offer(calls + k)
                if entry is None:
                    continue
                entry[1:] = [slots.offsets[k], read_output(reply, k, arena, slots.outs[k], shape, dtype,
                                                           device, into=entry[2], pid=hold["pid"], heap=heap), k]
                where["held" if reply["outs"][k].get("held") else "copied"] += 1
                picked.append(entry)
                for name, (offset, ishape, _), original in zip(spec.args, slots.specs[k],
                                                               pools.inputs(slots.offsets[k])):
                    if not bits.bit_equal(arena.tensor(offset, ishape, original.dtype), original):
                        raise KernelFault("kernel_fn modified its input `%s` while being timed" % name)
            if gpu is not None:
                for _, _, out, k in picked:
                    again = output_view(output_desc(reply, k, shape, dtype, device), arena, slots.outs[k],
                                        heap, shape, dtype)
                    if not bits.bit_equal(out, again):
                        raise KernelFault("the output of a timed call changed after the kernel's process "
                                          "reported it done: work was left running past the clock")
            last = (calls + count - 1, slots.offsets[count - 1],
                    read_output(reply, count - 1, arena, slots.outs[count - 1], shape, dtype, device,
                                into=last[2] if last else None, pid=hold["pid"], heap=heap), count - 1)
            calls += count
            checks = sample.entries()
            phases["checks"] += time.perf_counter() - t_checks
        r += 1
        progress("timing round %d" % r, None)
    if last is None:
        raise KernelFault("no timed call finished within the time limit")
    checks = [("timed call #%d" % e[0],) + tuple(e[1:]) for e in checks]
    checks.append(("last timed call #%d" % last[0],) + last[1:])
    if gpu is not None and idle_worst > GPU_IDLE_LIMIT_US:
        raise KernelFault("the GPU was still busy %.0f us after the kernel's process reported its calls "
                          "done: work was left queued past the clock" % idle_worst)

    null = median(samples["N"])
    net_c = [c - null for c in samples["C"]]
    net_r = [x - null for x in samples["R"]]
    result = summarize(net_c, net_r)
    # Each round times kernel, reference and null back to back: one paired ratio per round, the
    # distribution the cold re-check (recheck.py) judges by its lower tail.
    result["pair_ratios"] = [r_ / c_ for c_, r_ in zip(net_c, net_r) if c_ > 0]
    result.update({
        "method": "judge's clock (perf_counter_ns) around rounds of %d call%s in the kernel's sandboxed "
                  "process%s, minus a null kernel's rounds; reference in its own process; fresh inputs per "
                  "call%s" % (count, "" if count == 1 else "s",
                               " replayed as a CUDA graph" if graphs and graphs[0] else "",
                               ", L2 flushed before every round" if gpu is not None else ""),
        "outputs": _outputs_text(device, hold, where, heap_why),
        "cuda_graph": bool(graphs and graphs[0]),
        "cold_l2": gpu is not None, "reps": len(samples["C"]), "calls_per_round": count,
        "null_us": null, "raw_latency_us": median(samples["C"]), "raw_ref_latency_us": median(samples["R"]),
        "timed_calls": calls, "checked_calls": len(checks), "settled_early": settled,
        "timing_seconds": time.perf_counter() - start,
        # Where the stage's wall time went (all rounds, warm-up included): what a round costs
        # around its clock decides how many rounds fit the budget.
        "phases_s": {k: round(v, 4) for k, v in phases.items()},
    })
    if gpu is not None:
        result["gpu_idle_probe_us"] = idle_worst
        if why_eager:
            result["eager_because"] = why_eager
    return result, [(what, pools.inputs(offsets), out) for what, offsets, out, _ in checks]


def _outputs_text(device, hold, where, heap_why):
    """Where the checked outputs of the timed calls were read, for the result's timing.outputs."""
    if not hold["on"]:
        return hold["why"] or "copied into the judge's region inside the clock"
    left = "read from the kernel's stopped process" if device == "cpu" else \
        "read where the kernel left them, in GPU memory the judge maps (no copy on any clock)"
    if not where["copied"]:
        return left
    text = "copied into the judge's region by the kernel's process, inside its own clock"
    if where["held"]:
        return "%s for %d of %d checked calls; the others %s" % (text, where["copied"], where["copied"] + where["held"],
                                                                 left)
    return "%s%s" % (text, " (%s)" % heap_why if heap_why else "")


class Reservoir:
    """Which timed calls are checked: the first FORCED ones, and a uniform sample of `size` of all
    later ones (reservoir sampling). A fixed chance per call until the checks ran out spent them
    all in the first rounds (a round on the GPU is up to 128 calls), so a kernel honest for a few
    rounds and wrong after them was accepted (cheaters/late_rounds.py). An entry is a list [call,
    offsets, output, slot]; a replaced entry's output tensor is reused for its successor."""

    FORCED = (0, 2)

    def __init__(self, size, rng):
        self.size, self.rng = size, rng
        self.forced, self.kept, self.seen = [], [], 0

    def offer(self, call):
        """The entry to fill for this call, or None when it is not checked."""
        if call in self.FORCED:
            self.forced.append([call, None, None, None])
            return self.forced[-1]
        self.seen += 1
        if len(self.kept) < self.size:
            self.kept.append([call, None, None, None])
            return self.kept[-1]
        j = self.rng.randrange(self.seen)
        if j >= self.size:
            return None
        self.kept[j][0] = call
        return self.kept[j]

    def entries(self):
        return self.forced + self.kept


def _spin_seconds(device, budget):
    """How long both ends of a timed request poll instead of sleeping: on CUDA a few rounds' length
    (the kernel runs on the GPU, the two spinning threads take two of the host's cores); never on
    the CPU, where a spinning judge would take a core from the kernel it times.
    AUTOKERNEL_TIMING_SPIN=0 turns it off (for side-by-side measurements)."""
    if device != "cuda" or os.environ.get("AUTOKERNEL_TIMING_SPIN") == "0":
        return 0.0
    return 4 * budget["round_s"]


def _settled(samples, budget, checked):
    """True once the kernel's and the reference's net medians are both within the budget's
    settled_pct (standard error), with enough calls checked to stop."""
    target = budget.get("settled_pct")
    if not target or checked < SETTLED_MIN_CHECKS:
        return False
    null = median(samples["N"])
    return all(noise_pct([x - null for x in samples[side]]) <= target for side in ("C", "R"))


def verify(checks, main_case, spec, tolerances):
    """None, or the reason an output produced while being timed is wrong."""
    tol = tolerances[main_case.dtype]
    for what, inputs, out in checks:
        truth = plan.ground_truth(spec, inputs)
        problem = compare.check(out, truth, main_case.torch_dtype, tol)
        if problem:
            return ("%s (fresh inputs in the timing slots): %s -- results reused or cached, or behaviour "
                    "that changes while being timed" % (what, problem))
    if not checks:
        return "no timed call could be checked (timing loop too short)"
    return None
