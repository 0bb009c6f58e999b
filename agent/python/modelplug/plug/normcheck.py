"""The checks, run once at plug time, that a norm module computes what the kernel's contract says (eps,
weight offset, bias): a float64 copy of the module run on fresh inputs. Below both the module plugs
(modules.py) and the swapped forwards (swap.py), which each ask them."""

import copy

import torch
import torch.nn.functional as F

from .kernel import _same

EPS_ATTRS = ("eps", "variance_epsilon", "epsilon", "norm_eps", "layer_norm_eps", "rms_norm_eps")


def module_eps(module):
    for name in EPS_ATTRS:
        v = getattr(module, name, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


def _rms_error(module, eps, offset, runs):
    err = 0.0
    for x, w, y in runs:
        ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (offset + w)
        err = max(err, float((y - ref).abs().max()) / max(1.0, float(ref.abs().max())))
    return err


def rmsnorm_mismatch(module, eps, offset):
    """"" when the module computes x * rsqrt(mean(x^2) + eps) * (offset + w), checked once by running a
    float64 copy of it on fresh inputs (ordinary and tiny, where eps decides) with its own weight and a
    random one (where the offset shows); else the reason, naming what it computes instead."""
    w = module.weight
    try:
        probe = copy.deepcopy(module).to(dtype=torch.float64)
        probe._forward_hooks.clear()
        probe._forward_pre_hooks.clear()
        vars(probe).pop("forward", None)        # an earlier plug's instance forward is not the module
        dtype, tol = torch.float64, 1e-5
    except Exception:  # noqa: BLE001 - not copyable: the module itself, its weight put back after
        probe, dtype = module, w.dtype
        tol = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 1e-2}.get(dtype, 1e-4)
    n = w.shape[0]
    g = torch.Generator(device="cpu").manual_seed(4321)
    xs = [torch.randn(4, n, generator=g, dtype=torch.float64), torch.randn(4, n, generator=g, dtype=torch.float64) * 3e-4]
    saved = probe.weight.detach().clone()
    runs = []
    try:
        with torch.no_grad():
            for weight in (saved.to(torch.float64).cpu(), torch.randn(n, generator=g, dtype=torch.float64) * 0.5):
                probe.weight.copy_(weight.to(device=w.device, dtype=probe.weight.dtype))
                for x in xs:
                    y = type(probe).forward(probe, x.to(device=w.device, dtype=dtype))
                    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
                        return "the module does not return one tensor of its input's shape"
                    runs.append((x, weight, y.detach().to("cpu", torch.float64)))
    except Exception as exc:  # noqa: BLE001
        return "the module could not be checked on fresh inputs: %s: %s" % (type(exc).__name__, exc)
    finally:
        with torch.no_grad():
            probe.weight.copy_(saved)
    if _rms_error(module, eps, offset, runs) <= tol:
        return ""
    other = 1.0 - offset if offset in (0.0, 1.0) else 0.0
    if _rms_error(module, eps, other, runs) <= tol:
        return "the module computes x^ * (%g + w), the kernel x^ * (%g + w)" % (other, offset)
    for e in (1e-5, 1e-6, 1e-8, 1e-12):
        for o in (offset, other):
            if not _same(e, eps) and _rms_error(module, e, o, runs) <= tol:
                return "the module computes eps %g (offset %g), the kernel eps %g" % (e, o, eps)
    return "the module is not x * rsqrt(mean(x^2) + %g) * (%g + w) on fresh inputs (error %.3g)" % (
        eps, offset, _rms_error(module, eps, offset, runs))


def layernorm_mismatch(module, eps, bias):
    """"" when the module computes F.layer_norm(x, (N,), weight, bias, eps) (nn.LayerNorm itself, or a
    class checked on fresh float64 inputs, ordinary and tiny); else the reason."""
    w, b = getattr(module, "weight", None), getattr(module, "bias", None)
    if not isinstance(w, torch.Tensor) or w.dim() != 1:
        return "the module has no 1-d weight (the layernorm contract scales by weight[N])"
    if bias != isinstance(b, torch.Tensor):
        return "the module %s a bias, the kernel %s" % ("has" if isinstance(b, torch.Tensor) else "has no",
                                                         "adds one" if bias else "has none")
    own = module_eps(module)
    if own is not None and not _same(own, eps):
        return "eps %g, the kernel implements %g" % (own, eps)
    if type(module).forward is torch.nn.LayerNorm.forward and tuple(module.normalized_shape) == (w.shape[0],):
        return ""
    try:
        probe = copy.deepcopy(module).to(dtype=torch.float64)
        probe._forward_hooks.clear()
        probe._forward_pre_hooks.clear()
        vars(probe).pop("forward", None)
        g = torch.Generator(device="cpu").manual_seed(4321)
        err = 0.0
        with torch.no_grad():
            for scale in (1.0, 3e-4):
                x = (torch.randn(4, w.shape[0], generator=g, dtype=torch.float64) * scale).to(w.device)
                y = type(probe).forward(probe, x)
                ref = F.layer_norm(x, (w.shape[0],), probe.weight, probe.bias if bias else None, eps)
                err = max(err, float((y - ref).abs().max()) / max(1.0, float(ref.abs().max())))
    except Exception as exc:  # noqa: BLE001
        return "the module could not be checked on fresh inputs: %s: %s" % (type(exc).__name__, exc)
    return "" if err <= 1e-5 else "the module is not F.layer_norm(x, weight, %s, %g) on fresh inputs (error %.3g)" % (
        "bias" if bias else "None", eps, err)
