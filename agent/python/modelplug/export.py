"""The `export` worker op: a standalone Python package holding a verified run's final set of kernels.

args {run_dir, out_dir, package, verification: verification.json's object}
-> {package_dir, kernels: [...], files: [...]}

The package depends on torch (and Triton where its kernels import it), nothing of this project:

  <out_dir>/<package>/__init__.py   apply(model) / restore(model), KERNELS, VERIFIED
  <out_dir>/<package>/_plug/        the modelplug/plug package, verbatim: the code verify measured
  <out_dir>/<package>/kernels/<kernel>.py
  <out_dir>/<package>/plan.json     kernel -> op type, call sites, sha256 of its source
  <out_dir>/README.md               what was measured, with the numbers
"""

import hashlib
import json
import os
import shutil

from modelplug import provenance

INIT = '''"""Kernels found and verified by AutoKernel Studio for {model}.

    import {package}
    plugged = {package}.apply(model)     # the same module instance the numbers were measured on
    ...
    {package}.restore(model)             # back to PyTorch's own kernels

The kernels were chosen for MODE ("eager", or "compile": by their effect under torch.compile).
apply(model) plugs them the way that mode runs them: plain calls in eager mode; under "compile" each
kernel is a torch.library custom op with a fake implementation (torch.compile keeps it as one node,
no graph break) and each plugged Linear holds its transposed weight, made once (the weights must not
change after apply). apply(model, mode="eager" | "compile") overrides it.

See README.md for what was measured. Depends on torch only (and Triton for GPU kernels).
"""

import json
import os

from . import _plug

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "plan.json")) as _f:
    PLAN = json.load(_f)
VERIFIED = PLAN["verified"]
MODE = PLAN.get("mode", "eager")
KERNELS = [k["kernel"] for k in PLAN["kernels"]]
_applied = {{}}
_modules = {{}}     # kernel -> its module, imported once: a re-import is a fresh @triton.jit/autotune cache


def _load():
    import torch
    out = []
    for k in PLAN["kernels"]:
        if k["kernel"] not in _modules:
            _modules[k["kernel"]], _ = _plug.load_kernel(os.path.join(_HERE, "kernels", k["file"]),
                                                         "{package}_" + k["kernel"])
        module = _modules[k["kernel"]]
        dtype = getattr(torch, k["dtype"]) if k.get("dtype") else None
        out.append(_plug.Kernel(k["kernel"], k["op_type"], module.kernel_fn, k["sites"], dtype,
                                contract=_plug.contract_of(module), callable=k.get("callable")))
    return out


def apply(model, mode=None):
    """Plugs the kernels into `model` at the call sites they were verified at; returns a report per
    kernel (sites plugged, why a site could not take its kernel; under compile how it is called)."""
    mode = mode or MODE
    if mode not in ("eager", "compile"):
        raise ValueError("apply(mode=%r): mode must be eager or compile" % (mode,))
    restore(model)
    kernels = _load()
    if mode == "compile":
        _plug.as_custom_ops(kernels)     # a torch without custom ops: plain calls, and the report says so
    plugged = _plug.Plugged(model, kernels, frozen=mode == "compile")
    _applied[id(model)] = plugged
    return plugged.report()


def reproduce(model, inputs, rounds=15):
    """Re-times the model with and without the kernels, paired round by round, and compares with what
    was measured at export (provenance.json); says so when this device is another. Returns a report."""
    from . import _reproduce
    return _reproduce.run(_HERE, model, inputs, apply, restore, rounds)


def restore(model):
    """Puts `model` back exactly as it was before apply()."""
    plugged = _applied.pop(id(model), None)
    if plugged is not None:
        plugged.restore()


def report(model):
    """Calls routed to each kernel since apply(), and fallbacks to PyTorch with their reasons."""
    plugged = _applied.get(id(model))
    return plugged.report() if plugged is not None else []
'''

README = '''# {package}

Kernels for `{model}` found by AutoKernel Studio's loop and verified inside the model
(`autokernel-cli verify`, {when}). {mode_text}

```python
import {package}
{package}.apply(model)     # plug the kernels in at their call sites
{package}.restore(model)   # and take them out again
```

## Measured ({device_name}, {dtype}, torch {torch}{triton})

| | median per forward | vs eager |
|---|---|---|
{timing_rows}

{compile_advice}Parity: every output compared with the model in higher precision on seeds {seeds}: worst error
{parity_error} tolerances (eager: {eager_error}), {parity_text}.

## Kernels

| kernel | op | call sites | in-model effect | saves per forward in eager | under torch.compile |
|---|---|---|---|---|---|
{kernel_rows}

Each call whose arguments do not fit a kernel's contract (another dtype, a mask the kernel does
not implement) runs PyTorch's own op instead; `{package}.report(model)` says how often.
'''


REPRODUCE = """
## Before it shipped: the cold re-check

Each kernel was benched again from nothing (a fresh process importing it anew), paired round by round
with PyTorch's own op on the kernel's contract, and packaged only if the 10th percentile of the
paired ratios (PyTorch time / kernel time) is above 1. Every ratio is in `{package}/provenance.json`.

| kernel | pairs | 10th percentile | median | 90th percentile |
|---|---|---|---|---|
{rows}
{withheld}
## Reproducing

`{package}/provenance.json` holds where this was measured (GPU, driver, CUDA, torch, Triton, clocks,
power limit; the CPU), the seeds, the judge's version, every kernel's sha256 and every raw sample.

    autokernel-cli reproduce <this directory>      # each kernel's re-check again, compared
    {package}.reproduce(model, inputs)             # the model with and without the kernels, compared

Both say whether the new numbers agree with the recorded ones (within the recorded spread of the
paired ratios, 10th to 90th percentile) and say so when the device differs.
"""


def reproduce_section(package, kept, withheld):
    rows = ["| %s | %s | %s | %s | %s |" % (k["kernel"], k["recheck"].get("pairs"), _fmt(k["recheck"].get("p10"), "%.3fx"),
                                           _fmt(k["recheck"].get("median"), "%.3fx"), _fmt(k["recheck"].get("p90"), "%.3fx"))
            for k in kept] or ["| (none) | | | | |"]
    text = "".join("\nWithheld by the re-check at export: %s: %s\n" % (n, why) for n, why in withheld.items())
    return REPRODUCE.format(package=package, rows="\n".join(rows), withheld=text)


def _fmt(v, spec="%.3g"):
    return spec % v if isinstance(v, (int, float)) else "-"


def _saved(entry, mode):
    """What the kernel saves per forward in `mode` (verify's leave-one-out), "-" where not measured."""
    m = (entry.get("versus") or {}).get(mode)
    if not isinstance(m, dict):
        return "-"
    return "%+.1f us (%+.2f%%)" % (m["saved_us"], m["effect_pct"])


def _mode_text(mode, chosen):
    if mode == "compile":
        text = ("`apply(model)` plugs them for `torch.compile` (mode compile): each kernel a `torch.library` "
                "custom op with a fake implementation, so compile keeps it as one node; compile the model "
                "after `apply()`, and do not change its weights after.")
    else:
        text = "`apply(model)` plugs them for eager mode (mode eager); `apply(model, mode=\"compile\")` for torch.compile."
    if chosen != mode:
        text += " The set was chosen in %s mode (`verify --mode %s` chooses it under %s)." % (
            chosen, mode, "torch.compile" if mode == "compile" else "eager")
    else:
        text += " The set was chosen by its effect in this mode."
    return text


def handle(args, ctx=None):
    run_dir, out_dir = args["run_dir"], args["out_dir"]
    v = args.get("verification") or {}
    package = args.get("package") or "autokernel_kernels"
    if not package.isidentifier():
        raise ValueError("export: package name %r is not a Python identifier" % package)
    final = v.get("final_set") or []
    entries = {k["kernel"]: k for k in v.get("kernels", [])}
    pkg = os.path.join(out_dir, package)
    if os.path.exists(pkg):
        raise ValueError("export: %s already exists" % pkg)
    os.makedirs(os.path.join(pkg, "kernels"))
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copytree(os.path.join(here, "plug"), os.path.join(pkg, "_plug"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    chosen = v.get("mode") or "eager"
    mode = args.get("mode") or chosen
    if mode not in ("eager", "compile"):
        raise ValueError("export: mode %r: it must be eager or compile" % mode)
    plan = {"verified": {k: v.get(k) for k in ("model_path", "model_sha256", "device", "device_name", "dtype",
                                               "torch", "triton", "model_speedup", "mode_speedup", "seeds")},
            "mode": mode, "chosen_in_mode": chosen, "kernels": []}
    kept, withheld = [], {}
    for name in final:
        src = os.path.join(run_dir, "kernels", name, "kernel.py")
        with open(src, "rb") as f:
            data = f.read()
        sha = hashlib.sha256(data).hexdigest()
        e = entries.get(name, {})
        if e.get("blob_sha256") and e["blob_sha256"] != sha:
            raise ValueError("export: %s changed since it was verified: verify again" % src)
        fname = "".join(c if c.isalnum() else "_" for c in name) + ".py"
        # Nothing ships without its cold re-check (#43 item 3): verify's, else one run now.
        rc = provenance.ensure_rechecked(e, src, v, args)
        if not rc.get("offered"):
            withheld[name] = rc.get("why", "")
            continue
        kept.append({"kernel": name, "file": fname, "sha256": sha, "op_type": e.get("op_type"),
                     "dtype": v.get("dtype"), "contract": rc.get("contract"), "recheck": rc})
        with open(os.path.join(pkg, "kernels", fname), "wb") as f:
            f.write(data)
        plan["kernels"].append({"kernel": name, "file": fname, "op_type": e.get("op_type"), "sites": e.get("sites", []),
                                "dtype": v.get("dtype"), "sha256": sha, "effect_pct": e.get("effect_pct"),
                                "callable": e.get("callable") or ""})
    with open(os.path.join(pkg, "plan.json"), "w") as f:
        json.dump(plan, f, indent=2)
    provenance.write(pkg, provenance.record(v, kept, v.get("seeds") or []))
    shutil.copyfile(os.path.join(here, "pkgreproduce.py"), os.path.join(pkg, "_reproduce.py"))
    model = os.path.basename(v.get("model_path") or "the model")
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write(INIT.format(package=package, model=model))
    t = v.get("timings") or {}
    rows = []
    for key in ("eager", "eager+ours", "compile", "compile+ours"):
        if isinstance(t.get(key), dict):
            rows.append("| %s | %s us | %sx |" % (key, _fmt(t[key]["median_us"], "%.1f"),
                                                   _fmt(t[key]["speedup_vs_eager"], "%.3f")))
        elif t.get(key + "_error"):
            rows.append("| %s | not measured: %s | |" % (key, t[key + "_error"]))
    p = v.get("parity") or {}
    krows = ["| %s | %s | %d | %s%% | %s | %s |" % (k["kernel"], k["op_type"], len(k["sites"]),
                                                   _fmt(k.get("effect_pct"), "%.2f"),
                                                   _saved(entries.get(k["kernel"], {}), "eager"),
                                                   _saved(entries.get(k["kernel"], {}), "compile"))
             for k in plan["kernels"]] or ["| (none: no kernel made the model faster) | | | | | |"]
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write(README.format(compile_advice=(t["compile_advice"][0].upper() + t["compile_advice"][1:] + ".\n\n")
                              if t.get("compile_advice") else "",
                              package=package, model=model, mode_text=_mode_text(mode, chosen), when=v.get("when", ""),
                              device_name=v.get("device_name", "?"), dtype=v.get("dtype", "?"),
                              torch=v.get("torch", "?"),
                              triton=(", Triton %s" % v["triton"]) if v.get("triton") else "",
                              timing_rows="\n".join(rows), seeds=", ".join(str(s) for s in v.get("seeds", [])),
                              parity_error=_fmt(p.get("error")), eager_error=_fmt(p.get("eager_error")),
                              parity_text="passed" if p.get("ok") else "FAILED", kernel_rows="\n".join(krows)))
    with open(os.path.join(out_dir, "README.md"), "a") as f:
        f.write(reproduce_section(package, kept, withheld))
    files = []
    for root, _, names in os.walk(out_dir):
        files += [os.path.relpath(os.path.join(root, n), out_dir) for n in names]
    return {"package_dir": pkg, "kernels": [k["kernel"] for k in plan["kernels"]], "files": sorted(files),
            "mode": mode, "chosen_in_mode": chosen}
