"""Which inputs each stage uses. Everything here runs BEFORE the kernel module is imported: the
inputs and their ground truths exist before any kernel code could patch torch."""

import torch

from ..contract import inputs as gen_inputs
from ..contract.rules import DEFAULT_DTYPES, STAGES
from ..contract.dtypes import canonical, to_torch


class Case:
    """One set of inputs with its ground truth."""

    def __init__(self, stage, spec, size, dtype, dist, seed):
        self.stage, self.spec, self.size, self.dtype, self.dist, self.seed = \
            stage, spec, size, dtype, dist, seed
        self.inputs = None
        self.truth = None

    @property
    def torch_dtype(self):
        return to_torch(self.dtype)

    @property
    def label(self):
        dims = " ".join("%s=%d" % (d, self.size[d]) for d in self.spec.dims)
        return "%s, %s, %s inputs" % (dims, self.dtype, self.dist)

    def out_nbytes(self):
        return self.truth.numel() * torch.finfo(self.torch_dtype).bits // 8 if self.truth is not None else 0

    def materialize(self, device):
        gen = gen_inputs.generator(device, self.seed)
        with torch.no_grad():
            self.inputs = tuple(self.spec.make_inputs(self.size, self.torch_dtype, device, gen, self.dist))
            self.truth = ground_truth(self.spec, self.inputs)
        return self


def ground_truth(spec, inputs):
    """The reference in fp64 for fp32 inputs, fp32 for fp16/bf16: never rounded to the test dtype."""
    floats = [t for t in inputs if t.is_floating_point()]
    wide = torch.float64 if floats and floats[0].dtype == torch.float32 else torch.float32
    up = tuple(t.to(wide) if t.is_floating_point() else t for t in inputs)
    return spec.ground_truth(*up)


def _odd(rng, lo, hi, even=False):
    lo, hi = int(lo), int(hi)
    v = rng.randint(lo, hi)
    if even:
        v += v % 2
        return max(2, v if v <= hi or hi < 2 else v - 2)
    if v % 2 == 0:
        v = v + 1 if v + 1 <= hi else max(1, v - 1)
    return v


def secret_sizes(spec, mode, rng, count):
    ranges = spec.secret_ranges[mode]
    return [{d: _odd(rng, *ranges[d], even=d in spec.even_dims) for d in spec.dims}
            for _ in range(count)]


def resolve_dtypes(device, override, requested):
    dtypes = [canonical(d) for d in override] if override else list(DEFAULT_DTYPES[device])
    timing = canonical(requested) if requested else dtypes[0]
    if timing not in dtypes:
        dtypes.insert(0, timing)
    return dtypes, timing


def build(spec, device, quick, dtypes, timing_dtype, model_sizes, rng):
    """{stage: [Case]} plus ("timing", [main, alt1, alt2]); cases not yet materialised."""
    mode = "quick" if quick else device
    check_dtypes = [timing_dtype] if quick else dtypes
    sizes = spec.sizes[mode]
    seed = lambda: rng.getrandbits(62)  # noqa: E731 - a fresh secret seed per case
    plan = {s: [] for s in STAGES}
    plan["smoke"].append(Case("smoke", spec, sizes[0], check_dtypes[0], "normal", seed()))
    for i, size in enumerate(sizes):
        for j, dt in enumerate(check_dtypes):
            plan["sizes"].append(Case("sizes", spec, size, dt, gen_inputs.REGULAR[(i + j) % 2], seed()))
    hostile_size = sizes[min(1, len(sizes) - 1)]
    for dt in check_dtypes:
        for dist in gen_inputs.HOSTILE:
            plan["hostile"].append(Case("hostile", spec, hostile_size, dt, dist, seed()))
    if spec.contract_probe and spec.contract_probe[0] not in check_dtypes:
        # An attribute whose effect the test dtypes cannot resolve (exact vs tanh GELU): one case
        # in the dtype that can.
        dt, dist = spec.contract_probe
        plan["hostile"].append(Case("hostile", spec, hostile_size, dt, dist, seed()))
    plan["determinism"].append(Case("determinism", spec, sizes[-1], timing_dtype, "normal", seed()))
    for size in spec.odd_sizes[mode]:
        for dt in check_dtypes:
            plan["odd_sizes"].append(Case("odd_sizes", spec, size, dt, "uniform", seed()))
    for size in secret_sizes(spec, mode, rng, 1 if quick else 2):
        plan["odd_sizes"].append(Case("odd_sizes", spec, size, timing_dtype, "normal", seed()))
    for size in model_sizes:
        for dt in check_dtypes:
            plan["model_shapes"].append(Case("model_shapes", spec, size, dt, "normal", seed()))
    timing_size = model_sizes[0] if model_sizes else spec.headline[mode]
    plan["timing"] = [Case("timing", spec, timing_size, timing_dtype, dist, seed())
                      for dist in ("normal", "uniform", "normal")]
    return plan

