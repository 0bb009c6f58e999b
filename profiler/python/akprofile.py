"""Worker op `profile`: run a whole PyTorch model under torch.profiler and report per-kernel time.

args:
  model        bundled example name ("gpt2", "llama", "bert", "cnn") or a path to a .py file that
               defines get_model() and get_inputs() (and optionally get_dtype())
  device       "cuda" | "cpu" | "" (auto: cuda when available)
  dtype        "bf16" | "fp16" | "fp32" | "" (model's get_dtype(), else bf16 on cuda, fp32 on cpu)
  warmup       untimed iterations before profiling (default 2)
  iterations   profiled iterations (default 3)
  examples_dir where bundled examples live (default: <this file's dir>/examples)

Result: one row per (kernel, launching aten op, input shapes). Times are per iteration. On a GPU a
row is a device kernel (time from the kernel events, never from aten rows, so nothing is counted
twice) and its launching op is the innermost aten op whose correlation id the kernel carries. On a
CPU there are no kernels: a row is an aten op and its time is its self CPU time.

Classification, roofline and ranking are done by the caller (C++ core), so the GUI and the CLI share
them; this file only measures.
"""

import importlib.util
import os
import platform
import sys
import time
import traceback

MODULE_PREFIX = "ak.module:"
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
TORCH_DTYPE_NAMES = {"float": "fp32", "float32": "fp32", "c10::Half": "fp16", "c10::BFloat16": "bf16",
                     "half": "fp16", "bfloat16": "bf16", "float16": "fp16", "double": "fp64",
                     "long int": "int64", "int": "int32", "bool": "bool", "long": "int64"}


class ModelError(Exception):
    """A problem with the user's model file; the message names the file and the cause."""


def _here():
    return os.path.dirname(os.path.abspath(__file__))


def resolve_model_path(model, examples_dir=None):
    if not model:
        raise ModelError("no model given: pass a bundled example name (gpt2, llama, bert, cnn) or a .py path")
    if os.sep in model or model.endswith(".py"):
        path = os.path.abspath(os.path.expanduser(model))
        if not os.path.isfile(path):
            raise ModelError("model file not found: %s" % path)
        return path
    candidates = [examples_dir] if examples_dir else []
    candidates += [os.path.join(_here(), "examples"),
                   os.path.join(_here(), "..", "..", "resources", "examples")]  # source tree
    for directory in candidates:
        path = os.path.join(directory, model + ".py")
        if os.path.isfile(path):
            return os.path.abspath(path)
    raise ModelError("unknown model '%s': not a bundled example and not a path to a .py file" % model)


def load_model_module(path):
    name = "akmodel_" + "".join(c if c.isalnum() else "_" for c in os.path.basename(path)[:-3])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelError("%s: cannot be loaded as a Python module" % path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ModelError("%s:%s: syntax error: %s" % (exc.filename or path, exc.lineno, exc.msg)) from exc
    except BaseException as exc:  # noqa: BLE001 - anything the file does at import time
        raise ModelError("%s: failed to import: %s: %s" % (path, type(exc).__name__, exc)) from exc
    for required in ("get_model", "get_inputs"):
        if not callable(getattr(module, required, None)):
            raise ModelError("%s: does not define %s()" % (path, required))
    return module


def _call_user(path, what, fn):
    try:
        return fn()
    except BaseException as exc:  # noqa: BLE001
        if _is_oom(exc):
            raise ModelError("%s: out of memory in %s: %s" % (path, what, _first_line(exc))) from exc
        raise ModelError("%s: %s raised %s: %s" % (path, what, type(exc).__name__, _first_line(exc))) from exc


def _first_line(exc):
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


def _is_oom(exc):
    import torch
    oom_type = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    if isinstance(exc, MemoryError) or (oom_type is not None and isinstance(exc, oom_type)):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def _to_device(value, device, dtype):
    import torch
    if isinstance(value, torch.Tensor):
        value = value.to(device)
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(v, device, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device, dtype) for k, v in value.items()}
    return value


class _ModuleScopes:
    """Wraps every module's forward in a record_function scope named after its class, so each op
    knows which module (RMSNorm, Rotary, SwiGLU...) it ran in. The classifier uses this only to
    name unfused elementwise work; the op type still comes from the aten op first."""

    def __init__(self, model):
        import torch
        self._stack = []
        self._handles = []
        record_function = torch.autograd.profiler.record_function
        for qualname, module in model.named_modules():
            # Class, then the module's qualified name in the model ("layers.3.attn"): the call site.
            label = MODULE_PREFIX + type(module).__name__ + ":" + (qualname or "<model>")

            def pre(mod, inputs, _label=label):
                scope = record_function(_label)
                scope.__enter__()
                self._stack.append(scope)

            def post(mod, inputs, output):
                if self._stack:
                    self._stack.pop().__exit__(None, None, None)

            self._handles.append(module.register_forward_pre_hook(pre))
            self._handles.append(module.register_forward_hook(post))

    def remove(self):
        while self._stack:
            self._stack.pop().__exit__(None, None, None)
        for handle in self._handles:
            handle.remove()


def _dtype_map(prof):
    """correlation id -> input dtypes (FunctionEvent has no dtypes in torch 1.13; KinetoEvent has)."""
    result = {}
    try:
        events = prof.profiler.kineto_results.events()
    except Exception:  # noqa: BLE001 - optional detail
        return result
    for event in events:
        try:
            result[event.correlation_id()] = [TORCH_DTYPE_NAMES.get(d, d) for d in event.dtypes()]
        except Exception:  # noqa: BLE001
            continue
    return result


def _context(event):
    """(aten ancestors innermost first, innermost module class, its qualified name) of a CPU op."""
    stack, module, qualname = [], "", ""
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith(MODULE_PREFIX):
            if not module:
                module, _, qualname = parent.name[len(MODULE_PREFIX):].partition(":")
        elif parent.name.startswith("aten::"):
            stack.append(parent.name)
        parent = parent.cpu_parent
    return stack, module, qualname


def _python_frames(event, limit=4):
    """(the torch function that was called, the user's frames innermost first) from the Python stack
    the profiler recorded (with_stack). Entries look like "<built-in function linear>",
    "torch/nn/modules/linear.py(113): forward", "nn.Module: Linear_0", "model.py(45): forward": the
    first built-in is the torch function ("linear", "softmax"); the user's frames name the functions
    that called it ("apply_rotary_pos_emb (modeling_llama.py:153)")."""
    torch_fn, user = "", []
    for frame in getattr(event, "stack", None) or []:
        if frame.startswith("<built-in"):
            if not torch_fn and not user:
                name = frame[1:-1].split()[2] if len(frame.split()) > 2 else frame
                torch_fn = name.split(".")[-1]
            continue
        if frame.startswith("nn.Module:"):
            continue
        path, _, rest = frame.rpartition("(")
        line, _, function = rest.partition("): ")
        if not path or not function:
            continue
        norm = path.replace(os.sep, "/")
        if norm.startswith("torch/") or "/torch/" in norm or norm.endswith("akprofile.py"):
            continue
        user.append("%s (%s:%s)" % (function, os.path.basename(path), line))
        if len(user) >= limit:
            break
    return torch_fn, user


def _stack_config(torch):
    """Keyword arguments that make the profiler keep each op's Python stack. torch 2.x drops it from
    the events unless the experimental config is verbose (pytorch/pytorch#100253): on the H200's torch
    2.11 every call site came back with no frames and no torch function, so a rotary embedding written
    as functions (transformers' apply_rotary_pos_emb / rotate_half) was classified as elementwise and
    copy rows instead of rotary_embedding."""
    config = getattr(getattr(torch._C, "_profiler", None), "_ExperimentalConfig", None)
    if config is None:
        return {}
    try:
        return {"experimental_config": config(verbose=True)}
    except (TypeError, RuntimeError):
        return {}


def _concrete(event):
    values = getattr(event, "concrete_inputs", None)
    if not values:
        return []
    out = []
    for v in values:
        out.append(v if isinstance(v, (int, float, bool, str)) or v is None else str(v))
    return out


def _is_device_event(event):
    from torch.autograd import DeviceType
    return getattr(event, "device_type", DeviceType.CPU) != DeviceType.CPU


def _rows(prof, iterations, gpu, capture=None):
    """capture (akcapture.Capture or None): each call site's raw facts, attached as `call`; rows whose
    sites' facts differ (another eps, causal or not) are kept apart by a fingerprint in the key."""
    dtypes = _dtype_map(prof)
    facts_cache = {}
    rows = {}
    attributed = 0.0
    device_total = 0.0
    events = prof.events()
    # torch 2.x mirrors record_function scopes (ours and the user's) as device-side annotation spans
    # around the kernels they contain: those are not device work, and would count it twice.
    host_names = {e.name for e in events if not _is_device_event(e)}
    for event in events:
        if gpu and _is_device_event(event):
            if event.name not in host_names and not event.name.startswith(MODULE_PREFIX):
                device_total += event.time_range.elapsed_us()
            continue
        if _is_device_event(event) or not event.name.startswith("aten::"):
            continue
        if gpu:
            samples = [(k.name, float(k.duration)) for k in event.kernels]
        else:
            samples = [(event.name, float(event.self_cpu_time_total))] if event.self_cpu_time_total > 0 else []
        if not samples:
            continue
        stack, module, qualname = _context(event)
        shapes = [list(s) for s in (event.input_shapes or [])]
        torch_fn, frames = _python_frames(event)
        facts, fingerprint = None, ""
        if capture is not None:
            cache_key = (qualname, torch_fn, event.name, tuple(stack), tuple(frames), repr(shapes))
            if cache_key not in facts_cache:
                try:
                    found = capture.join(qualname, torch_fn, event.name, stack, frames, shapes)
                    facts_cache[cache_key] = (found, capture.fingerprint(found))
                except Exception:  # noqa: BLE001 - a site without facts, never a failed profile
                    facts_cache[cache_key] = (None, "")
            facts, fingerprint = facts_cache[cache_key]
        for name, duration in samples:
            key = (name, event.name, repr(shapes), module, fingerprint)
            row = rows.get(key)
            if row is None:
                row = rows[key] = {
                    "name": name, "aten_op": event.name, "op_stack": stack, "module": module,
                    "shapes": shapes, "dtypes": dtypes.get(event.id, []), "concrete_inputs": _concrete(event),
                    "total_us": 0.0, "count": 0, "sites": {},
                }
            row["total_us"] += duration
            row["count"] += 1
            attributed += duration
            site = (qualname, torch_fn, tuple(frames))
            entry = row["sites"].get(site)
            if entry is None:
                entry = row["sites"][site] = {"module": qualname, "module_class": module, "function": torch_fn,
                                              "frames": frames, "aten_op": event.name, "op_stack": stack,
                                              "shapes": shapes, "dtypes": row["dtypes"], "count": 0}
                if facts is not None:
                    entry["call"] = facts
            entry["count"] += 1
            entry["total_us"] = entry.get("total_us", 0.0) + duration
    result = list(rows.values())
    if gpu and device_total > attributed * 1.001 + 1.0:
        # Device work no CPU op claimed (e.g. launched from a library thread): shown, not dropped.
        result.append({"name": "(device time not attributed to an aten op)", "aten_op": "", "op_stack": [],
                       "module": "", "shapes": [], "dtypes": [], "concrete_inputs": [],
                       "total_us": device_total - attributed, "count": iterations, "sites": {}})
    for row in result:
        row["time_us"] = row["total_us"] / iterations
        row["calls"] = row["count"] / iterations
        # Where in the model this kernel ran: one entry per (module, torch function, Python frames).
        sites = list(row.pop("sites", {}).values())
        for site in sites:
            site["calls"] = site.pop("count") / iterations
            site["time_us"] = site.pop("total_us", 0.0) / iterations
        row["call_sites"] = sorted(sites, key=lambda s: s["module"])
        row["functions"] = sorted({f.split(" (")[0] for s in sites for f in s["frames"]})
    if capture is not None:
        result = _regions(result, capture)
    result.sort(key=lambda r: r["time_us"], reverse=True)
    total = sum(r["time_us"] for r in result)
    for row in result:
        row["share"] = row["time_us"] / total if total > 0 else 0.0
    return result, total


def _regions(rows, capture):
    """Rows with fusable regions merged in (akregions.py); the rows as they were if that fails."""
    import copy
    try:
        import akregions
        return akregions.apply(copy.deepcopy(rows), capture)
    except Exception:  # noqa: BLE001 - regions are extra: the profile stands without them
        traceback.print_exc(file=sys.stderr)
        return rows


def handle(args, ctx=None):
    import torch

    def progress(message, fraction):
        if ctx is not None:
            ctx.progress(message, fraction)

    device = (args.get("device") or "").strip().lower()
    if not device:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cuda", "cpu"):
        raise ModelError("unknown device '%s' (use cuda or cpu)" % device)
    if device == "cuda" and not torch.cuda.is_available():
        raise ModelError("--device cuda requested but torch.cuda.is_available() is False in %s (torch %s)"
                         % (sys.executable, torch.__version__))
    warmup = max(0, int(args.get("warmup", 2)))
    iterations = max(1, int(args.get("iterations", 3)))
    os.environ["AUTOKERNEL_DEVICE"] = device  # bundled examples size themselves by this

    examples_dir = args.get("examples_dir") or (os.path.join(ctx.worker_dir, "examples") if ctx else None)
    path = resolve_model_path(args.get("model", ""), examples_dir)
    progress("loading %s" % os.path.basename(path), 0.0)
    module = load_model_module(path)

    dtype_name = (args.get("dtype") or "").strip().lower()
    if not dtype_name and callable(getattr(module, "get_dtype", None)):
        value = _call_user(path, "get_dtype()", module.get_dtype)
        dtype_name = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}.get(value, str(value))
    if not dtype_name:
        dtype_name = "bf16" if device == "cuda" else "fp32"
    if dtype_name not in DTYPES:
        raise ModelError("unsupported dtype '%s' (use bf16, fp16 or fp32)" % dtype_name)
    dtype = getattr(torch, DTYPES[dtype_name])

    torch.manual_seed(0)
    model = _call_user(path, "get_model()", module.get_model)
    if not isinstance(model, torch.nn.Module) and not callable(model):
        raise ModelError("%s: get_model() returned %s, not a torch.nn.Module" % (path, type(model).__name__))
    if isinstance(model, torch.nn.Module):
        model = _call_user(path, "moving the model to %s/%s" % (device, dtype_name),
                           lambda: model.to(device=device, dtype=dtype).eval())
    inputs = _call_user(path, "get_inputs()", module.get_inputs)
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    inputs = _to_device(list(inputs), device, dtype)

    def step():
        with torch.no_grad():
            out = model(*inputs)
        if device == "cuda":
            torch.cuda.synchronize()
        return out

    for i in range(warmup):
        progress("warm-up %d/%d" % (i + 1, warmup), 0.1 + 0.3 * i / max(1, warmup))
        _call_user(path, "the model's forward (warm-up)", step)

    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    scopes = _ModuleScopes(model) if isinstance(model, torch.nn.Module) else None
    progress("profiling %d iterations" % iterations, 0.4)
    started = time.perf_counter()
    try:
        with profile(activities=activities, record_shapes=True, with_stack=True, **_stack_config(torch)) as prof:
            for _ in range(iterations):
                _call_user(path, "the model's forward", step)
    finally:
        if scopes is not None:
            scopes.remove()
    wall_ms = (time.perf_counter() - started) * 1000.0 / iterations
    progress("recording each call site's arguments", 0.85)
    capture, capture_error = None, ""
    if isinstance(model, torch.nn.Module):
        try:
            import akcapture
            capture = akcapture.capture(model, inputs, device)
        except Exception as exc:  # noqa: BLE001 - the facts are extra: the profile stands without them
            capture_error = "%s: %s" % (type(exc).__name__, _first_line(exc))
    else:
        capture_error = "get_model() did not return an nn.Module: no call facts recorded"
    progress("analysing trace", 0.9)
    rows, total = _rows(prof, iterations, device == "cuda", capture)
    if not rows:
        raise ModelError("%s: the profiler recorded no %s work" % (path, "kernel" if device == "cuda" else "aten op"))

    result = {
        "model": args.get("model", ""), "model_path": path, "device": device, "dtype": dtype_name,
        "activity": "cuda" if device == "cuda" else "cpu", "warmup": warmup, "iterations": iterations,
        "total_time_us": total, "wall_time_ms": wall_ms, "kernels": rows,
        "torch": torch.__version__, "python": sys.executable, "python_version": platform.python_version(),
    }
    if capture_error:
        result["capture_error"] = capture_error
    if device == "cuda":
        result["gpu_name"] = torch.cuda.get_device_name(0)
    return result


if __name__ == "__main__":
    # Direct use for debugging: akprofile.py MODEL [device] [dtype]
    import json
    try:
        out = handle({"model": sys.argv[1], "device": sys.argv[2] if len(sys.argv) > 2 else "",
                      "dtype": sys.argv[3] if len(sys.argv) > 3 else ""})
        for r in out["kernels"][:15]:
            print("%6.2f%% %10.1f us  %-40s %s %s" % (100 * r["share"], r["time_us"], r["name"][:40], r["aten_op"],
                                                   r["module"]))
        print(json.dumps({k: v for k, v in out.items() if k != "kernels"}))
    except ModelError:
        traceback.print_exc()
        sys.exit(1)
