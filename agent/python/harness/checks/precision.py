"""The precision probe (issue 43 item 5): does a kernel take a shortcut the reference does not take?

Two shortcuts turn "1.3x faster" into a different computation while passing loose fp16/bf16
tolerances: accumulating a long sum in fp16/bf16 (a 16-bit accumulator in a GEMM's K loop or a
reduction) and computing fp32 inputs with fewer mantissa bits (TF32's 10, bf16's 7). Each probe is an
input where a kernel that accumulates in fp32 (and reads fp32 inputs whole) and one that takes the
shortcut land measurably apart:

- fp16/bf16 inputs: long sums (K or N = 8192) of positive values in [0.5, 1]. The partial sums grow
  to thousands, where a 16-bit accumulator rounds every addition at the running sum's scale; a
  kernel that accumulates in fp32 and rounds once is within half an ulp of the output dtype of the
  fp64 truth. An element is "off" when its error exceeds eps(dtype) * |truth| (at least one ulp,
  twice what one rounding gives); flagged when PROBE_FRACTION of the elements are off.
- fp32 inputs: values 1 + s*2^-9 + r*2^-12 (s in {0, 1}, r in [0, 1)). Rounding them to 10 mantissa
  bits (TF32, fp16) drops the r term, a relative error of ~2^-12 (2.4e-4) in every product, with one
  sign; 8 bits (bf16) drops the s term too (~1e-3). fp32 arithmetic stays within ~1e-6. The median
  relative error decides: above TF32_MIN is "tf32", above BF16_MIN "fp32_in_16bit".

The reference (eager PyTorch on the same inputs, in the judge's process, with PyTorch's default
switches) is probed the same way: a shortcut it takes too (cuBLAS may split K with fp16 reductions)
is recorded but not held against the kernel. A shortcut it does not take fails the stage, unless the
run allows reduced precision (`allow_reduced_precision`): then the kernel passes, flagged.

Ops without a probe (their results' precision is judged by the regular tolerances only) say so.
"""

import torch

from ..contract.dtypes import dtype_name
from .plan import Case

PROBE_FRACTION = 0.05      # share of elements more than one ulp off that flags 16-bit accumulation
TF32_MIN = 3e-5            # median relative error of fp32 inputs read with 10 mantissa bits: ~2.4e-4
BF16_MIN = 6e-4            # ... with 8 bits: ~1.2e-3
LONG = 8192                # length of the sums

FLAG_TEXT = {
    "reduced_accumulation": "accumulates in %s (a 16-bit accumulator)",
    "tf32": "reads fp32 inputs with 10 mantissa bits (TF32)",
    "fp32_in_16bit": "computes fp32 inputs in 16-bit precision (bf16 or an fp16/bf16 accumulator)",
}


def _positive(shape, dtype, device, gen):
    """Values in [0.5, 1] (rounded to dtype): sums grow without cancelling."""
    return (0.5 + 0.5 * torch.rand(shape, generator=gen, dtype=torch.float32, device=device)).to(dtype)


def _fp32_bits(shape, device, gen):
    """1 + s*2^-9 + r*2^-12: the low mantissa bits carry a one-signed share of every value."""
    s = (torch.rand(shape, generator=gen, device=device) < 0.5).to(torch.float32)
    r = torch.rand(shape, generator=gen, device=device)
    return 1.0 + s * 2.0 ** -9 + r * 2.0 ** -12


def _values(shape, dtype, device, gen):
    return _fp32_bits(shape, device, gen) if dtype == torch.float32 else _positive(shape, dtype, device, gen)


def _matmul(spec, dtype, device, gen):
    M, N = 64, 64
    A, B = _values((M, LONG), dtype, device, gen), _values((LONG, N), dtype, device, gen)
    size = {"M": M, "N": N, "K": LONG}
    if "bias" in spec.args:
        return size, (A, B, _positive((N,), dtype, device, gen))
    return size, (A, B)


def _bmm(spec, dtype, device, gen):
    batch, M, N = 2, 32, 32
    A = _values((batch, M, LONG), dtype, device, gen)
    B = _values((batch, N, LONG) if "Bt" in spec.args else (batch, LONG, N), dtype, device, gen)
    return {"batch": batch, "M": M, "N": N, "K": LONG}, (A, B)


def _reduce(spec, dtype, device, gen):
    M = 64
    return {"M": M, "N": LONG}, (_values((M, LONG), dtype, device, gen),)


# op -> probe(spec, torch dtype, device, generator) -> (size, inputs). Positive sums suit every
# matmul contract: the bias is positive and every activation is ~identity on large positive values.
PROBES = {"matmul": _matmul, "bmm": _bmm, "reduce": _reduce}


class ProbeCase(Case):
    """A case whose inputs come from the probe and whose truth is fp64 (any dtype)."""

    def __init__(self, spec, dtype, seed):
        super().__init__("precision", spec, None, dtype, "probe", seed)

    @property
    def label(self):
        dims = " ".join("%s=%d" % (d, self.size[d]) for d in self.spec.dims) if self.size else ""
        return "%s, %s, precision probe" % (dims, self.dtype)

    def materialize(self, device):
        gen = torch.Generator(device=device)
        gen.manual_seed(self.seed)
        with torch.no_grad():
            self.size, self.inputs = PROBES[self.spec.name](self.spec, self.torch_dtype, device, gen)
            self.truth = self.spec.ground_truth(*(t.double() for t in self.inputs))
        return self


def cases(spec, dtypes, seed):
    """One probe case per tested dtype; [] for an op without a probe."""
    if spec.name not in PROBES:
        return []
    return [ProbeCase(spec, dt, seed() if callable(seed) else seed) for dt in dtypes]


def classify(out, truth, dtype):
    """(flag or None, measured text) for one output against its fp64 truth."""
    o = out.detach().to(torch.float64).reshape(-1)
    t = truth.detach().to(torch.float64).reshape(-1).to(o.device)
    rel = (o - t).abs() / t.abs().clamp(min=1e-30)
    if not bool(torch.isfinite(rel).all()):
        return "reduced_accumulation" if dtype != torch.float32 else "fp32_in_16bit", "non-finite outputs"
    if dtype == torch.float32:
        med = float(rel.median())
        text = "median relative error %.3g (fp32 arithmetic: < %.0e; TF32: ~2.4e-4; bf16: ~1e-3)" % (med, TF32_MIN)
        if med > BF16_MIN:
            return "fp32_in_16bit", text
        return ("tf32" if med > TF32_MIN else None), text
    eps = torch.finfo(dtype).eps
    off = float((rel > eps).double().mean())
    text = "%.1f%% of elements more than one %s ulp off (fp32 accumulation: 0%%; flagged from %.0f%%)" % (
        100 * off, dtype_name(dtype), 100 * PROBE_FRACTION)
    return ("reduced_accumulation" if off >= PROBE_FRACTION else None), text


def flag_text(flag, dtype):
    text = FLAG_TEXT[flag]
    return text % dtype_name(dtype) if "%s" in text else text


def reference_flag(case):
    """The reference's own shortcut on this probe (None when it takes none or cannot run it)."""
    try:
        with torch.no_grad():
            out = case.spec.reference(*case.inputs)
    except Exception:  # noqa: BLE001 - a reference without this dtype on this device (CPU fp16 GEMM)
        return None
    return classify(out, case.truth, case.torch_dtype)[0]
