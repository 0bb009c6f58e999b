#!/usr/bin/env python3
"""Issue #15's side-by-side table: the tune loop's best kept kernel for each op of a run against
its starter, PyTorch eager and torch.compile, all in this one process.

Reads a run directory (docs/run-format.md): each kernel's best kept version is its head,
kernels/<NN>-<op>/kernel.py in the working tree; its starter is the baseline experiment's commit
(`git show`), else the shipped starter of this tree. Inputs are drawn at the kernel's own shape
(TEST_SIZES[0], the model's) in its dtype. Every variant's output is compared with a float32
reference on the same inputs first (relative L2 error; a wrong variant gets no time). Times are
triton.testing.do_bench medians (it clears a 256 MB buffer before every repetition, so each call
reads cold data), taken in --rounds rounds with the variants in rotating order; the number reported
is the median of the rounds. Throughput uses the harness's own formulas (agent/python/harness/ops):
GB/s for the memory-bound ops, TFLOP/s for matmul.

Variants: tuned (the head), starter, eager (the harness's reference, what the loop's bench calls
PyTorch; for rmsnorm that is the upcast expression models write, plus F.rms_norm as "eager fused"
where torch has it) and torch.compile of the eager function in each of --compile-modes.
"max-autotune" uses CUDA graphs, whose trees copy every non-static input into the graph's own
buffer on each call; "max-autotune-no-cudagraphs" has no such copy.

    python3 tests/bench/tuner_table.py --run RUN_DIR [--out DIR] [--rounds 3] [--rep-ms 200]
        [--compile-modes max-autotune,max-autotune-no-cudagraphs] [--ops softmax,...]

Writes tuner_table.json, tuner_table.tsv and tuner_table.md to --out (default $OUT, else .), and
prints the markdown table last. Without CUDA (a CPU test of the script) it times with a plain clock
and skips what the installed torch lacks.
"""

import argparse
import ast
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STARTERS = os.path.join(ROOT, "agent", "python", "harness", "starters")
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32,
          "bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
DECIDED = ("keep", "revert", "fail", "crash", "timeout", "pending", "reject")

# Issue #15's targets on the H200 (bf16). Absolute bandwidths are the H200's (4.8 TB/s HBM3e).
TARGETS = {"softmax": ">= 3.8 TB/s", "rmsnorm": ">= 3.9 TB/s (at least compile)",
           "layernorm": ">= 3.9 TB/s (at least compile)", "cross_entropy": ">= 3.0 TB/s",
           "matmul": ">= 0.95x cuBLAS"}


# ---- the ops: inputs, eager (the harness's reference), formulas -------------------------------

def _rmsnorm_ref(x, weight):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    return (y * weight.float()).to(x.dtype)


def _rmsnorm_fused(x, weight):
    return F.rms_norm(x, (x.shape[-1],), weight, 1e-6)


def _softmax_ref(x):
    return torch.softmax(x, dim=-1)


def _layernorm_ref(x, weight, bias):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, 1e-5)


def _cross_entropy_ref(logits, targets):
    return F.cross_entropy(logits, targets)


def _matmul_ref(A, B):
    return torch.matmul(A, B)


def _inputs(op, s, dtype, device, gen):
    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen, device=device, dtype=torch.float32) * scale).to(dtype)

    def uniform(n, lo, hi):
        return (torch.rand(n, generator=gen, device=device, dtype=torch.float32) * (hi - lo) + lo).to(dtype)

    if op == "softmax":
        return (randn(s["rows"], s["cols"], scale=2.0),)
    if op == "rmsnorm":
        return (randn(s["M"], s["N"]), uniform(s["N"], 0.1, 1.0))
    if op == "layernorm":
        return (randn(s["batch"], s["dim"]), uniform(s["dim"], 0.1, 1.0), randn(s["dim"], scale=0.1))
    if op == "cross_entropy":
        logits = randn(s["batch"], s["vocab"], scale=2.0)
        targets = torch.randint(0, s["vocab"], (s["batch"],), generator=gen, device=device, dtype=torch.int64)
        return (logits, targets)
    if op == "matmul":
        return (randn(s["M"], s["K"]), randn(s["K"], s["N"], scale=s["K"] ** -0.5))
    raise KeyError(op)


OPS = {
    # eager, bytes(size, dt), flops(size), unit, shape text
    "softmax": (_softmax_ref, lambda s, dt: 2.0 * s["rows"] * s["cols"] * dt, lambda s: 5.0 * s["rows"] * s["cols"],
                "GB/s", lambda s: "%dx%d" % (s["rows"], s["cols"])),
    "rmsnorm": (_rmsnorm_ref, lambda s, dt: (2.0 * s["M"] * s["N"] + s["N"]) * dt, lambda s: 6.0 * s["M"] * s["N"],
                "GB/s", lambda s: "%dx%d" % (s["M"], s["N"])),
    "layernorm": (_layernorm_ref, lambda s, dt: (2.0 * s["batch"] * s["dim"] + 2.0 * s["dim"]) * dt,
                  lambda s: 8.0 * s["batch"] * s["dim"], "GB/s", lambda s: "%dx%d" % (s["batch"], s["dim"])),
    "cross_entropy": (_cross_entropy_ref, lambda s, dt: (float(s["batch"]) * s["vocab"] + s["batch"]) * dt,
                      lambda s: 4.0 * s["batch"] * s["vocab"], "GB/s", lambda s: "%dx%d" % (s["batch"], s["vocab"])),
    "matmul": (_matmul_ref, lambda s, dt: float(s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]) * dt,
               lambda s: 2.0 * s["M"] * s["N"] * s["K"], "TFLOP/s", lambda s: "%dx%dx%d" % (s["M"], s["N"], s["K"])),
}
ISSUE_SIZES = {"softmax": {"rows": 8192, "cols": 8192}, "rmsnorm": {"M": 8192, "N": 8192},
               "layernorm": {"batch": 8192, "dim": 8192}, "cross_entropy": {"batch": 8192, "vocab": 128256},
               "matmul": {"M": 4096, "N": 4096, "K": 4096}}


# ---- the run directory -------------------------------------------------------------------------

def read_run(run_dir):
    """kernel name -> what the log says about it (record, baseline commit, counts, head, state)."""
    kernels, experiments, states = {}, {}, {}
    with open(os.path.join(run_dir, "experiments.jsonl"), encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                continue  # a record still being written
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("type") == "kernel":
                if rec.get("action") == "add":
                    kernels[rec["kernel"]] = {"name": rec["kernel"], "record": rec.get("record", {})}
                else:
                    states[rec.get("kernel")] = {"action": rec.get("action"), "reason": rec.get("reason", "")}
            elif rec.get("type") == "experiment" and "id" in rec:
                experiments[rec["id"]] = rec  # the last line for an id wins
    for name, k in kernels.items():
        mine = sorted((e for e in experiments.values() if e.get("kernel") == name), key=lambda e: e["id"])
        base = [e for e in mine if e.get("status") == "baseline"]
        tries = [e for e in mine if e.get("status") != "baseline"]
        counts = {}
        for e in tries:
            counts[e.get("status", "?")] = counts.get(e.get("status", "?"), 0) + 1
        head = None
        for e in mine:  # the last record that moved the kernel's branch
            if e.get("head"):
                head = e
        if head is None and base:
            head = base[0]  # nothing kept: the head is the baseline (its metrics line has no "head")
        kept = [e for e in tries if e.get("status") == "keep"]
        k.update({
            "baseline": base[0] if base else None,
            "experiments": sum(n for s, n in counts.items() if s != "running"),
            "counts": counts,
            "keeps": len(kept),
            "kept": [{"id": e["id"], "description": e.get("description", ""),
                      "latency_us": e.get("metrics", {}).get("latency_us")} for e in kept],
            "seconds": sum(float(e.get("agent_seconds") or 0) + float(e.get("bench_seconds") or 0) for e in tries),
            "head": head,
            "state": states.get(name, {}),
        })
    return kernels


def _git_show(run_dir, commit, path):
    try:
        return subprocess.run(["git", "-C", run_dir, "show", "%s:%s" % (commit, path)], check=True,
                              capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def _literal(text, name):
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def tunables(text):
    space = _literal(text, "TUNE_SPACE") or {}
    return {name: _literal(text, name) for name in space}


def config_change(starter_text, tuned_text):
    if starter_text is None:
        return "?"
    a, b = tunables(starter_text), tunables(tuned_text)
    moved = ["%s %s->%s" % (n, a.get(n), b.get(n)) for n in b if a.get(n) != b.get(n)]
    if moved:
        return ", ".join(moved)
    return "starter" if starter_text == tuned_text else "starter config, code changed"


def load_module(path, text, tag):
    name = "tuner_table_%s" % "".join(c if c.isalnum() else "_" for c in tag)
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- checking and timing -----------------------------------------------------------------------

def rel_error(out, truth):
    if isinstance(out, (tuple, list)):
        out = out[0]
    out = out.detach().float()
    truth = truth.detach().float()
    if out.shape != truth.shape:
        return float("inf"), "shape %s, expected %s" % (tuple(out.shape), tuple(truth.shape))
    if not torch.isfinite(out).all():
        return float("inf"), "non-finite output"
    denom = truth.norm().item()
    err = (out - truth).norm().item() / (denom if denom > 0 else 1.0)
    return err, ""


def make_timer(device, rep_ms, warmup_ms):
    if device == "cuda":
        try:
            from triton.testing import do_bench
        except ImportError:
            do_bench = None
        if do_bench is not None:
            def timer(fn):
                return float(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))
            return timer, "triton.testing.do_bench median (256 MB L2 flush per repetition)"

    def timer(fn):  # plain clock: CPU tests of this script, or no Triton
        fn()
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        times, deadline = [], time.perf_counter() + rep_ms / 1000.0
        while time.perf_counter() < deadline or len(times) < 5:
            sync()
            t0 = time.perf_counter()
            fn()
            sync()
            times.append((time.perf_counter() - t0) * 1000.0)
        return statistics.median(times)
    return timer, "perf_counter median (no do_bench: not a GPU measurement)"


def compiled(eager, mode):
    # A fresh code object per mode: dynamo keys its cache on the code, so two modes of one function
    # must not share it.
    scope = {"_eager": eager}
    exec(compile("def _compiled_target(*args):\n    return _eager(*args)\n", "<tuner_table:%s>" % mode, "exec"), scope)
    return torch.compile(scope["_compiled_target"], mode=mode)


def measure_op(op, k, run_dir, args, device, timer, scratch):
    eager, nbytes, nflops, unit, shape_text = OPS[op]
    folder = k["record"].get("folder") or ("kernels/" + k["name"])
    tuned_path = os.path.join(run_dir, folder, "kernel.py")
    with open(tuned_path, encoding="utf-8") as f:
        tuned_text = f.read()
    sizes = _literal(tuned_text, "TEST_SIZES") or [ISSUE_SIZES[op]]
    size = dict(sizes[0])
    dtype_names = _literal(tuned_text, "TEST_DTYPES") or [k["record"].get("dtype", "bf16")]
    dtype = DTYPES.get(dtype_names[0], torch.bfloat16)
    dt = torch.empty((), dtype=dtype).element_size()

    starter_text, starter_from = None, ""
    if k.get("baseline") and k["baseline"].get("commit"):
        starter_text = _git_show(run_dir, k["baseline"]["commit"], folder + "/kernel.py")
        starter_from = "baseline commit %s" % k["baseline"]["commit"][:10]
    if starter_text is None:
        path = os.path.join(STARTERS, "triton" if device == "cuda" else "cpu", op + ".py")
        with open(path, encoding="utf-8") as f:
            starter_text = f.read()
        starter_from = "this tree's %s (no git in the run)" % os.path.relpath(path, ROOT)

    row = {"op": op, "kernel": k["name"], "shape": shape_text(size), "size": size, "dtype": str(dtype),
           "unit": unit, "starter_from": starter_from, "tuned_config": config_change(starter_text, tuned_text),
           "experiments": k["experiments"], "keeps": k["keeps"], "counts": k["counts"], "kept": k["kept"],
           "seconds_on_kernel": round(k["seconds"], 1), "state": k["state"], "target_h200": TARGETS.get(op, ""),
           "variants": {}, "notes": []}
    head = k.get("head") or {}
    base = k.get("baseline") or {}
    row["loop"] = {"head_id": head.get("id"), "head_description": head.get("description", ""),
                   "best_latency_us": (head.get("metrics") or {}).get("latency_us"),
                   "baseline_latency_us": (base.get("metrics") or {}).get("latency_us"),
                   "torch_latency_us": (base.get("metrics") or {}).get("ref_latency_us")}

    variants = [("tuned", None), ("starter", None), ("eager", eager)]
    if op == "rmsnorm" and hasattr(F, "rms_norm"):
        variants.append(("eager fused", _rmsnorm_fused))
    fns = {}
    mods = {}
    mods["tuned"] = load_module(os.path.join(scratch, op, "tuned", "kernel.py"), tuned_text, op + "_tuned")
    mods["starter"] = load_module(os.path.join(scratch, op, "starter", "kernel.py"), starter_text, op + "_starter")

    gen = torch.Generator(device=device)
    gen.manual_seed(1234)
    inputs = _inputs(op, size, dtype, device, gen)
    truth_inputs = tuple(t.float() if t.is_floating_point() else t for t in inputs)
    with torch.no_grad():
        truth = eager(*truth_inputs)
        if isinstance(truth, torch.Tensor):
            truth = truth.float()
    del truth_inputs
    tol = 2e-2 if dt == 2 else 1e-4

    def check(name, fn):
        t0 = time.perf_counter()
        try:
            with torch.no_grad():
                out = fn()
                if device == "cuda":
                    torch.cuda.synchronize()
                err, why = rel_error(out, truth)  # noqa: F821 - defined above; pyflakes reads the closing `del` as this scope's
        except Exception as exc:  # noqa: BLE001 - a broken variant is a row, not a crash
            row["variants"][name] = {"ok": False, "error": "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:300])}
            row["notes"].append("%s failed: %s" % (name, row["variants"][name]["error"]))
            traceback.print_exc()
            return False
        first_s = time.perf_counter() - t0
        ok = err <= tol
        row["variants"][name] = {"ok": ok, "rel_error": err, "first_call_s": round(first_s, 2)}
        if not ok:
            row["variants"][name]["error"] = why or "relative error %.3g > %.3g" % (err, tol)
            row["notes"].append("%s wrong: %s" % (name, row["variants"][name]["error"]))
        return ok

    for name, fn in variants:
        if name in mods:
            kernel_fn = mods[name].kernel_fn
            call = (lambda kf: (lambda: kf(*inputs)))(kernel_fn)  # noqa: F821 - see rel_error above
        else:
            call = (lambda f: (lambda: f(*inputs)))(fn)  # noqa: F821 - see rel_error above
        if check(name, call):
            fns[name] = call
    if device == "cuda" and hasattr(torch, "compile"):
        for mode in args.compile_modes:
            name = "compile " + mode
            try:
                cfn = compiled(eager, mode)
            except Exception as exc:  # noqa: BLE001
                row["variants"][name] = {"ok": False, "error": str(exc)[:300]}
                continue
            call = (lambda f: (lambda: f(*inputs)))(cfn)  # noqa: F821 - see rel_error above
            if check(name, call):  # the first call compiles (and autotunes): first_call_s
                fns[name] = call
    elif args.compile_modes:
        row["notes"].append("torch.compile not measured (%s)" % ("no CUDA" if device != "cuda" else "torch lacks it"))

    names = list(fns)
    samples = {n: [] for n in names}
    with torch.no_grad():
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)] if names else []
            for n in order:
                samples[n].append(timer(fns[n]))
    for n in names:
        ms = statistics.median(samples[n])
        v = row["variants"][n]
        v["ms"] = ms
        v["rounds_ms"] = samples[n]
        v["spread_pct"] = 100.0 * (max(samples[n]) - min(samples[n])) / ms if ms > 0 else 0.0
        if unit == "TFLOP/s":
            v["value"] = nflops(size) / (ms * 1e-3) / 1e12
        else:
            v["value"] = nbytes(size, dt) / (ms * 1e-3) / 1e9
    torch_names = [n for n in names if n.startswith("eager") or n.startswith("compile")]
    if "tuned" in fns and torch_names:
        best = min(torch_names, key=lambda n: row["variants"][n]["ms"])
        row["best_pytorch"] = best
        row["ratio_vs_best_pytorch"] = row["variants"][best]["ms"] / row["variants"]["tuned"]["ms"]
        for n in torch_names:
            row["variants"][n]["tuned_ratio"] = row["variants"][n]["ms"] / row["variants"]["tuned"]["ms"]
    if "tuned" in fns and "starter" in fns:
        row["tuned_vs_starter"] = row["variants"]["starter"]["ms"] / row["variants"]["tuned"]["ms"]
    del inputs, truth, fns
    if device == "cuda":
        torch.cuda.empty_cache()
    return row


# ---- output ------------------------------------------------------------------------------------

def fmt(row, name):
    v = row["variants"].get(name)
    if not v:
        return "—"
    if not v.get("ok"):
        return "wrong" if "rel_error" in v else "failed"
    if "value" not in v:
        return "?"
    value = v["value"]
    text = ("%.0f" % value) if value >= 100 else ("%.3g" % value)
    return text


def markdown(rows, meta, modes):
    lines = []
    lines.append("| op | shape | tuned kernel (config vs starter) | tuned | starter | eager | %s | tuned ÷ best PyTorch | "
                 "exps (keeps) | s on kernel | issue target (H200) |"
                 % " | ".join("compile %s" % m for m in modes))
    lines.append("|" + "---|" * (10 + len(modes)))
    for r in rows:
        unit = r["unit"]
        eager = fmt(r, "eager")
        if "eager fused" in r["variants"]:
            eager += " (F.rms_norm %s)" % fmt(r, "eager fused")
        ratio = r.get("ratio_vs_best_pytorch")
        ratio_text = ("%.2fx (vs %s)" % (ratio, r["best_pytorch"])) if ratio else "—"
        lines.append("| %s | %s | %s | %s %s | %s | %s | %s | %s | %d (%d) | %.0f | %s |" % (
            r["op"], r["shape"], r["tuned_config"], fmt(r, "tuned"), unit, fmt(r, "starter"), eager,
            " | ".join(fmt(r, "compile " + m) for m in modes), ratio_text, r["experiments"], r["keeps"],
            r["seconds_on_kernel"], r["target_h200"]))
    lines.append("")
    lines.append("%s; %s; torch %s, triton %s; %d rounds of %s." % (
        meta["gpu"], meta["run"], meta["torch"], meta["triton"], meta["rounds"], meta["timer"]))
    return "\n".join(lines) + "\n"


def write_outputs(args, meta, rows):
    """All three files, rewritten after every op: a call cut short keeps what it measured."""
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tuner_table.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1, default=str)
    names = ["tuned", "starter", "eager", "eager fused"] + ["compile " + m for m in args.compile_modes]
    with open(os.path.join(args.out, "tuner_table.tsv"), "w", encoding="utf-8") as f:
        f.write("\t".join(["op", "kernel", "shape", "unit", "tuned_config"]
                          + ["%s_value" % n.replace(" ", "_") for n in names]
                          + ["%s_us" % n.replace(" ", "_") for n in names]
                          + ["ratio_vs_best_pytorch", "best_pytorch", "experiments", "keeps", "seconds_on_kernel"]) + "\n")
        for r in rows:
            vals = [r["op"], r["kernel"], r["shape"], r["unit"], r["tuned_config"]]
            vals += ["%.1f" % r["variants"][n]["value"] if "value" in r["variants"].get(n, {}) else "" for n in names]
            vals += ["%.2f" % (1000 * r["variants"][n]["ms"]) if "ms" in r["variants"].get(n, {}) else "" for n in names]
            vals += ["%.3f" % r["ratio_vs_best_pytorch"] if r.get("ratio_vs_best_pytorch") else "",
                     r.get("best_pytorch", ""), str(r["experiments"]), str(r["keeps"]), str(r["seconds_on_kernel"])]
            f.write("\t".join(vals) + "\n")
    md = markdown(rows, meta, args.compile_modes)
    with open(os.path.join(args.out, "tuner_table.md"), "w", encoding="utf-8") as f:
        f.write(md)
    return md


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", required=True, help="run directory (autokernel-cli profile/run)")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for tuner_table.{json,tsv,md}")
    p.add_argument("--ops", default="", help="comma list of op types (default: every kernel of the run)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rep-ms", type=int, default=200, help="do_bench rep per measurement (ms)")
    p.add_argument("--warmup-ms", type=int, default=25)
    p.add_argument("--compile-modes", default="max-autotune,max-autotune-no-cudagraphs",
                   help="comma list of torch.compile modes ('' for none)")
    p.add_argument("--device", default="", help="cuda or cpu (default: cuda when available)")
    p.add_argument("--scratch", default="", help="where kernel copies are written (default: a temp folder)")
    args = p.parse_args()
    args.compile_modes = [m for m in args.compile_modes.split(",") if m]
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    wanted = [o for o in args.ops.split(",") if o]

    kernels = read_run(args.run)
    if not kernels:
        sys.exit("no kernels in %s" % args.run)
    timer, timer_text = make_timer(device, args.rep_ms, args.warmup_ms)
    import tempfile
    scratch = args.scratch or tempfile.mkdtemp(prefix="tuner_table_")
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = "none"
    meta = {"gpu": torch.cuda.get_device_name(0) if device == "cuda" else "CPU (script test, not a GPU measurement)",
            "device": device, "torch": torch.__version__, "triton": triton_version, "run": os.path.abspath(args.run),
            "rounds": args.rounds, "rep_ms": args.rep_ms, "timer": timer_text, "compile_modes": args.compile_modes,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print("tuner_table: %s, torch %s, triton %s, %d kernels in %s" % (meta["gpu"], meta["torch"], triton_version,
                                                                     len(kernels), args.run), flush=True)
    order = ["softmax", "rmsnorm", "layernorm", "cross_entropy", "matmul"]
    chosen = sorted(kernels.values(), key=lambda k: (order.index(k["record"].get("op_type"))
                                                     if k["record"].get("op_type") in order else 99, k["name"]))
    rows = []
    for k in chosen:
        op = k["record"].get("op_type")
        if op not in OPS or (wanted and op not in wanted):
            print("skipping %s (%s)" % (k["name"], op), flush=True)
            continue
        print("%s: measuring %s" % (k["name"], op), flush=True)
        t0 = time.perf_counter()
        try:
            row = measure_op(op, k, args.run, args, device, timer, scratch)
        except Exception as exc:  # noqa: BLE001 - one op's failure must not lose the others
            traceback.print_exc()
            row = {"op": op, "kernel": k["name"], "error": "%s: %s" % (type(exc).__name__, exc), "variants": {}}
            print("%s: %s" % (k["name"], row["error"]), flush=True)
            continue
        row["wall_s"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        write_outputs(args, meta, rows)
        print("%s done in %.0f s: %s" % (k["name"], row["wall_s"], ", ".join(
            "%s %s" % (n, fmt(row, n)) for n in row["variants"])), flush=True)

    md = write_outputs(args, meta, rows)
    for r in rows:
        for note in r.get("notes", []):
            print("note: %s: %s" % (r["op"], note))
    print()
    print(md, flush=True)


if __name__ == "__main__":
    main()
