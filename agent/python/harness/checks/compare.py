"""Comparing a kernel's output with the ground truth.

allowed(i) = atol * max(1, rms(row of truth_i)) + rtol * |truth_i| + eps(dtype) * |truth_i|

- the ground truth is the reference evaluated in fp64 (fp32 tests) or fp32 (fp16/bf16 tests) on the
  very same inputs, not rounded to the test dtype;
- atol is relative to the RMS of the element's row (last dimension; the whole tensor for 0-d and
  1-d outputs) when that exceeds 1, so large-magnitude and mixed-scale hostile rows and long
  reductions that cancel to near zero are judged by the same standard as O(1) data;
- one unit in the last place of the output dtype (eps * |t|) is always allowed, because a correct
  kernel must round its result to that dtype once.
"""

import torch

from ..contract.dtypes import dtype_name


def _index(flat_index, shape):
    idx = []
    for dim in reversed(shape):
        idx.append(flat_index % dim)
        flat_index //= dim
    return list(reversed(idx))


def _fmt(v):
    return "%.6g" % v


def check(out, truth, expected_dtype, tolerance):
    """None when `out` matches, else a one-line reason naming the worst element."""
    if not isinstance(out, torch.Tensor):
        return "kernel_fn returned %s, expected a tensor" % type(out).__name__
    if tuple(out.shape) != tuple(truth.shape):
        return "output shape %s, expected %s" % (list(out.shape), list(truth.shape))
    if out.dtype != expected_dtype:
        return "output dtype %s, expected %s" % (dtype_name(out.dtype), dtype_name(expected_dtype))
    if out.device != truth.device:
        return "output on %s, expected %s" % (out.device, truth.device)
    o = out.detach().to(truth.dtype).reshape(-1)
    t = truth.reshape(-1)
    n = t.numel()
    if n == 0:
        return None
    if truth.dim() >= 2 and truth.shape[-1] > 0:
        sq = truth.double() * truth.double()
        row_rms = torch.sqrt(sq.mean(dim=-1, keepdim=True)).expand(truth.shape).reshape(-1)
        scale = torch.clamp(row_rms, min=1.0).to(truth.dtype)
    else:
        scale = max(1.0, float(torch.sqrt(torch.mean(t.double() * t.double()))))
    # A truth beyond the dtype's range rounds to +-Inf: Inf (or saturation at +-max) is then the
    # correct answer, not a failure.
    big = float(torch.finfo(expected_dtype).max)
    beyond = torch.isfinite(t) & (t.abs() > big)
    if bool(beyond.any()):
        ok_beyond = beyond & (torch.sign(o) == torch.sign(t)) & (o.abs() >= big)
        wrong = beyond & ~ok_beyond
        if bool(wrong.any()):
            first = int(wrong.nonzero()[0, 0])
            return ("at %s the reference %s is beyond %s's range, so the output must be %sInf (or "
                    "saturate), got %s" % (_index(first, list(truth.shape)), _fmt(float(t[first])),
                                           dtype_name(expected_dtype), "+" if t[first] > 0 else "-",
                                           _fmt(float(o[first]))))
        o = torch.where(beyond, t, o)        # judged: exclude from the error statistics
    bad = ~torch.isfinite(o) & torch.isfinite(t)
    nbad = int(bad.sum())
    if nbad:
        nnan = int(torch.isnan(o).sum())
        first = int(bad.nonzero()[0, 0])
        return ("output has %d NaN and %d Inf values where the reference is finite (first at %s)"
                % (nnan, nbad - nnan, _index(first, list(truth.shape))))
    atol, rtol = float(tolerance["atol"]), float(tolerance["rtol"])
    eps = torch.finfo(expected_dtype).eps
    err = (o - t).abs()
    allowed = atol * scale + (rtol + eps) * t.abs()
    excess = err - allowed
    nviol = int((excess > 0).sum())
    if nviol == 0:
        return None
    worst = int(torch.argmax(excess))
    where = _index(worst, list(truth.shape)) if truth.dim() else "[]"
    return ("%d of %d elements outside tolerance (atol %g, rtol %g); worst at %s: got %s, expected %s "
            "(|err| %s > allowed %s)"
            % (nviol, n, atol, rtol, where, _fmt(float(o[worst])), _fmt(float(t[worst])),
               _fmt(float(err[worst])), _fmt(float(allowed[worst]))))


def max_error(out, truth):
    """Largest absolute error, for stage details."""
    if not isinstance(out, torch.Tensor) or out.shape != truth.shape or truth.numel() == 0:
        return float("nan")
    return float((out.detach().to(truth.dtype) - truth).abs().max())
