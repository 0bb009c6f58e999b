"""The `plugcheck` worker op: before a kernel folder gets any budget, is its kernel (the starter) plugged
into the model at every one of its call sites, does every call route to it, and does the model still
compute the same thing (#38 "Plug-check before spending")?

args  {model_path, device, dtype, kernels: [{name, op_type, path, sites: [module qualnames], callable?}], seed}
      callable: the folder's contract's callable (a NeoX rotary's "function:pkg.mod.apply_rotary_pos_emb"),
      used when the kernel's CONTRACT literal (the attributes only) does not carry it.
reply {model_path, device, dtype, seed, seconds,
       kernels: [{name, op_type, attrs, plugged_sites, unplugged_sites: {site: reason}, routed_calls,
                  fallback_calls: {reason: n}, other_calls?: {reason: n} (another folder's calls at the
                  site, left to PyTorch: not a fallback), parity: {ok, max_err, eager_err, worst_output},
                  pluggable, reason}]}

pluggable: every site plugged, routed_calls > 0, no fallback call, parity ok (verify.py's parity():
the error against a higher-precision truth within the harness's tolerance, or at most 2x eager's).
reason: "" or the first reason it is not.

Runs in process: the user's model is imported here as `profile` and verify's original-model side do,
and the kernels imported next to it. That is acceptable for the starters only, because they are our
own code (extract writes them); an agent-written kernel.py is checked by `verify`, whose kernels run
in the sandboxed model runner (child.py).
"""

import os
import time


def _inputs(original, seed):
    import akprofile
    import torch
    torch.manual_seed(seed)
    inputs = akprofile._call_user(original.path, "get_inputs()", original.module.get_inputs)
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    return akprofile._to_device(list(inputs), original.device, getattr(torch, original.dtype_name))


def _first_reason(entry):
    if entry.get("import_error"):
        return entry["import_error"]
    if not entry["sites"]:
        return "no call site recorded for this kernel"
    for site in entry["sites"]:
        if site in entry["unplugged_sites"]:
            return "%s: %s" % (site, entry["unplugged_sites"][site])
    if entry["fallback_calls"]:
        reason, n = max(entry["fallback_calls"].items(), key=lambda kv: kv[1])
        return "%d call%s fell back to PyTorch: %s" % (n, "" if n == 1 else "s", reason)
    if entry["routed_calls"] <= 0:
        return "no call of the model reached the kernel at %s" % ", ".join(entry["sites"])
    parity = entry.get("parity") or {}
    if parity.get("raised"):
        return "the model raised with the kernel plugged in: %s" % parity["raised"]
    if not parity.get("ok"):
        return ("the model's output differs with the kernel plugged in: error %s x the tolerance at %s "
                "(eager %s)" % (_fmt(parity.get("max_err")), parity.get("worst_output") or "?",
                                _fmt(parity.get("eager_err"))))
    return ""


def _fmt(x):
    return "inf" if x is None else "%.3g" % x


def _finite(x):
    return x if x == x and x not in (float("inf"), float("-inf")) else None


def check(original, kernels, seed):
    """Each kernel plugged alone into original.model: the reply's kernel entries."""
    import torch
    from modelplug import plug
    from modelplug.child import leaves
    from modelplug.verify import parity
    reference = original.outputs(seed)
    out = []
    for spec in kernels:
        entry = {"name": spec["name"], "op_type": spec["op_type"], "sites": list(spec.get("sites") or []),
                 "attrs": {}, "plugged_sites": [], "unplugged_sites": {}, "routed_calls": 0, "fallback_calls": {},
                 "parity": {"ok": False, "max_err": None}, "pluggable": False, "reason": ""}
        out.append(entry)
        try:
            module, ktype = plug.load_kernel(spec["path"], "plugcheck_" + spec["name"])
            fn = getattr(module, "kernel_fn", None)
            if not callable(fn):
                raise ValueError("defines no kernel_fn")
            kernel = plug.Kernel(spec["name"], spec["op_type"], fn, entry["sites"],
                                 getattr(torch, original.dtype_name), contract=plug.contract_of(module),
                                 callable=spec.get("callable") or None)
        except BaseException as exc:  # noqa: BLE001 - the kernel's import failing is its own problem
            entry["import_error"] = "%s does not import: %s: %s" % (os.path.basename(spec["path"]),
                                                                    type(exc).__name__, exc)
            entry["reason"] = _first_reason(entry)
            entry.pop("import_error")
            continue
        entry["attrs"] = dict(kernel.attrs)
        plugged = plug.Plugged(original.model, [kernel])
        raised = None
        try:
            inputs = _inputs(original, seed)
            with torch.no_grad():
                ours = original.model(*inputs)
        except Exception as exc:  # noqa: BLE001 - the kernel raising inside the model is the answer
            raised = "%s: %s" % (type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else "")
        finally:
            plugged.restore()
        report = kernel.report()
        entry.update({"plugged_sites": report["plugged_sites"], "unplugged_sites": report["unplugged_sites"],
                      "routed_calls": report["routed_calls"], "fallback_calls": report["fallback_calls"]})
        if report.get("other_calls"):       # calls another folder's contract takes (P @ V beside Q @ K^T)
            entry["other_calls"] = report["other_calls"]
        if raised is not None:
            entry["parity"] = {"ok": False, "max_err": None, "raised": raised}
        else:
            ok, worst, worst_eager, where = parity([(p, t.detach()) for p, t in leaves(ours)], reference,
                                                   original.dtype_name)
            entry["parity"] = {"ok": bool(ok), "max_err": _finite(worst), "eager_err": _finite(worst_eager),
                               "worst_output": where}
        entry["reason"] = _first_reason(entry)
        entry["pluggable"] = not entry["reason"]
    return out


def handle(args, ctx=None):
    from modelplug.verify import VerifyError, _Original
    started = time.perf_counter()
    model_path = args.get("model_path") or ""
    if not model_path or not os.path.isfile(model_path):
        raise VerifyError("the run's model file %s is missing" % (model_path or "(none recorded)"))
    device, dtype_name = args.get("device") or "cpu", args.get("dtype") or "float32"
    dtype_name = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}.get(dtype_name, dtype_name)
    seed = int(args.get("seed") or 0)
    if ctx is not None:
        ctx.progress("loading %s" % os.path.basename(model_path), 0.05)
    original = _Original(model_path, device, dtype_name)
    if ctx is not None:
        ctx.progress("plugging %d kernels one at a time" % len(args.get("kernels") or []), 0.3)
    kernels = check(original, args.get("kernels") or [], seed)
    return {"model_path": model_path, "device": device, "dtype": dtype_name, "seed": seed, "kernels": kernels,
            "seconds": time.perf_counter() - started}
