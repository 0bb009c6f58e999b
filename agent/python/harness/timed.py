"""The timing stage: alternated kernel/reference timing, with correctness re-checked on outputs
produced while being timed.

At random calls (secret RNG) fresh data is written into the SAME input buffers before the kernel
runs and its output is compared with that data's ground truth, computed before the kernel was
imported. A kernel that caches results by input address, reuses an earlier output, or changes
behaviour after N calls returns a stale or wrong output there.
"""

import random

import torch

from . import compare, timing
from .guards import sync

PROBE_PROBABILITY = 0.12
MAX_PROBES = 12

BUDGETS = {  # per device and mode: how long the timing loop may take
    ("cpu", True): {"budget_s": 0.4, "warmup": 2, "min_pairs": 5},
    ("cpu", False): {"budget_s": 2.0, "warmup": 3, "min_pairs": 10},
    ("cuda", True): {"rounds": 4, "warmup_ms": 10, "rep_ms": 30},
    ("cuda", False): {"rounds": 6, "warmup_ms": 25, "rep_ms": 60},
}


class Probe:
    """Decides which calls are checked and keeps what they returned."""

    def __init__(self, inputs, alts, seed):
        self.inputs = inputs
        self.pristine = [t.clone() for t in inputs]
        self.alts = alts
        self.rng = random.Random(seed)
        self.captured = []          # (call index, alt case, output clone)
        self.last_output = None
        self.calls = 0
        self._forced = {1, 3}       # early calls are always among the checked ones

    def __call__(self, i):
        if len(self.captured) >= MAX_PROBES:
            return None
        if i not in self._forced and self.rng.random() >= PROBE_PROBABILITY:
            return None
        alt = self.alts[self.rng.randrange(len(self.alts))]

        def before():
            for dst, src in zip(self.inputs, alt.inputs):
                dst.copy_(src)

        def after(out):
            snap = out.detach().clone() if isinstance(out, torch.Tensor) else out
            self.captured.append((i, alt, snap))
            for dst, src in zip(self.inputs, self.pristine):
                dst.copy_(src)
        return before, after

    def wrap(self, kernel):
        """For do_bench: the hooks run inside the timed call (a few reps; the median ignores them)."""
        def fn():
            hooks = self(self.calls)
            self.calls += 1
            if hooks:
                hooks[0]()
            out = kernel()
            if hooks:
                hooks[1](out)
            else:
                self.last_output = out
            return out
        return fn


def verify(probe, main_case, tolerances):
    """None, or the reason the outputs produced during timing are wrong."""
    for i, alt, out in probe.captured:
        problem = compare.check(out, alt.truth, alt.torch_dtype, tolerances[alt.dtype])
        if problem:
            return ("timed call #%d (fresh data written into the same input buffers): %s -- results "
                    "reused or cached by input address, or behaviour that changes after N calls"
                    % (i, problem))
    if probe.last_output is not None:
        problem = compare.check(probe.last_output, main_case.truth, main_case.torch_dtype,
                                tolerances[main_case.dtype])
        if problem:
            return "last timed call: %s -- behaviour changed while being timed" % problem
    for k, (now, before) in enumerate(zip(probe.inputs, probe.pristine)):
        if not compare.bit_equal(now, before):
            return "kernel_fn modified input `%s` while being timed" % main_case.spec.args[k]
    if not probe.captured:
        return "no timed call could be checked (timing loop too short)"
    return None


def reference_callable(spec, inputs, dtype_name):
    """The eager reference in the native dtype; an upcast one where the native dtype is not
    implemented on this device (CPU fp16 on torch 1.x), with a note saying so."""
    def native():
        return spec.reference(*inputs)
    try:
        with torch.no_grad():
            native()
        return native, ""
    except RuntimeError as e:
        up = tuple(t.float() if t.is_floating_point() else t for t in inputs)
        dt = inputs[0].dtype

        def upcast():
            return spec.reference(*up).to(dt)
        return upcast, ("reference timed in float32 (%s not implemented natively here: %s)"
                        % (dtype_name, str(e).splitlines()[0][:120]))


def measure(kernel_fn, spec, main_case, alts, device, quick, seed):
    """Returns (timing dict, probe). Raises whatever the kernel raises."""
    inputs = main_case.inputs
    probe = Probe(inputs, alts, seed)
    ref, note = reference_callable(spec, inputs, main_case.dtype)
    budget = BUDGETS[(device, bool(quick))]
    with torch.no_grad():
        if device == "cuda":
            held = [None]

            def ref_held():          # keep the last output alive, as the probe does for the kernel
                held[0] = ref()
            result = timing.cuda_ab(probe.wrap(lambda: kernel_fn(*inputs)), ref_held, **budget)
        else:
            result = timing.cpu_ab(lambda: kernel_fn(*inputs), ref, probe, **budget)
    sync(device)
    result["checked_calls"] = len(probe.captured)
    if note:
        result["note"] = note
    return result, probe


def peak_memory_mb(kernel_fn, inputs, device):
    if device != "cuda":
        return float("nan")
    # Inputs + outputs + workspace of one call, as if it ran alone (other cases stay resident).
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    kernel_fn(*inputs)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base
    own = sum(t.numel() * t.element_size() for t in inputs)
    return (extra + own) / 2 ** 20
