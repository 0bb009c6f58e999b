"""Worker op `roofs`: what the device measurably does, the roofs "% of roof" is taken against.

A spec sheet's bandwidth is a number no kernel reaches (an H100's 3.35 TB/s; a 1 GiB copy measures
about 3.0 TB/s), so a kernel at the device's real limit would show as 90 %. This op measures:
- copy bandwidth: a large device-to-device copy (read + write bytes / time), the fastest of several;
- matmul throughput: torch.matmul at a few large square sizes in the run's dtype, the fastest repeat.
On the CPU the same two, of the CPU's memory and its matmul (the CI test).

args: device ("cpu" | "cuda", default cuda when torch sees one), dtype ("bf16", "fp16", "fp32";
default bf16 on cuda, fp32 on cpu), force (measure again even when cached), cache_path (default
$XDG_CACHE_HOME/autokernel/roofs.json), copy_bytes, matmul_sizes, repeats (smaller for tests).
Result: {key, device, dtype, bandwidth_gbs, tflops: {dtype: x}, copy: {...}, matmul: {...},
cached: bool, measured_at, cache_path}. The cache is keyed by device name, driver, clocks and dtype:
a new driver or a locked clock measures again.
"""

import datetime
import json
import os
import platform
import statistics
import sys
import time

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "bfloat16": "bfloat16",
          "float16": "float16", "float32": "float32", "half": "float16"}
SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
METHOD = 2   # 2: the fastest repeat (1, the median, sank with the host's load)
DEFAULTS = {"cuda": {"copy_bytes": 1 << 30, "matmul_sizes": [4096, 8192, 16384], "repeats": 7},
            "cpu": {"copy_bytes": 64 << 20, "matmul_sizes": [512, 1024], "repeats": 5}}


def cache_path(args):
    if args.get("cache_path"):
        return args["cache_path"]
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "autokernel", "roofs.json")


def _read(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)        # readers never see half a file


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _nvml_facts(index):
    """Driver and the clocks the GPU runs at now (application clocks when set, else max): a locked
    or lowered clock is another roof."""
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        drv = pynvml.nvmlSystemGetDriverVersion()
        sm = pynvml.nvmlDeviceGetApplicationsClock(h, pynvml.NVML_CLOCK_SM)
        mem = pynvml.nvmlDeviceGetApplicationsClock(h, pynvml.NVML_CLOCK_MEM)
        return {"driver": drv.decode() if isinstance(drv, bytes) else drv, "sm_clock_mhz": sm, "mem_clock_mhz": mem}
    except Exception:  # noqa: BLE001 - no NVML here: the driver from the kernel module, clocks unknown
        pass
    try:
        with open("/proc/driver/nvidia/version") as f:
            words = f.readline().split()
        drv = next((w for w in words if w[:1].isdigit() and "." in w), "")
        return {"driver": drv}
    except OSError:
        return {}


def identity(device, dtype, torch):
    """The cache key's parts: what makes one measurement stand for another."""
    if device == "cuda":
        index = torch.cuda.current_device()
        facts = {"name": torch.cuda.get_device_name(index), "cuda": torch.version.cuda or torch.version.hip}
        facts.update(_nvml_facts(index))
    else:
        facts = {"name": "CPU %s" % _cpu_name(), "threads": torch.get_num_threads(), "machine": platform.machine()}
    facts["torch"] = torch.__version__
    facts["method"] = METHOD       # a roof measured another way is not this one: measured again
    key = " | ".join("%s=%s" % (k, facts[k]) for k in sorted(facts)) + " | dtype=%s" % SHORT[dtype]
    return key, facts


def _sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def _median_seconds(torch, device, fn, repeats):
    fn()
    _sync(torch, device)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        _sync(torch, device)
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def measure_copy(torch, device, nbytes, repeats):
    n = max(1, int(nbytes) // 4)
    src = torch.ones(n, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    med, times = _median_seconds(torch, device, lambda: dst.copy_(src), repeats)
    moved = 2.0 * n * 4          # read once, written once
    # The roof is what the device can do: the fastest repeat. On a shared host (other processes
    # taking the memory bus or the cores) the median drops with the load and a roof measured so
    # would put honest kernels "above 90 % of roof"; the fastest repeat is the one least disturbed.
    return {"bytes": n * 4, "repeats": repeats, "median_s": med, "best_s": min(times),
            "gbs": moved / min(times) / 1e9, "median_gbs": moved / med / 1e9,
            "samples_gbs": [moved / t / 1e9 for t in times]}


def measure_matmul(torch, device, dtype, sizes, repeats):
    best, per = 0.0, {}
    tdtype = getattr(torch, dtype)
    for size in sizes:
        try:
            a = torch.randn(size, size, device=device).to(tdtype)
            b = torch.randn(size, size, device=device).to(tdtype)
            _, times = _median_seconds(torch, device, lambda: torch.matmul(a, b), repeats)
            fastest = min(times)         # the roof: the least disturbed repeat (see measure_copy)
        except RuntimeError as e:            # out of memory at the largest size: the smaller ones stand
            per[str(size)] = "failed: %s" % str(e).splitlines()[0][:200]
            continue
        finally:
            a = b = None
        tflops = 2.0 * size ** 3 / fastest / 1e12
        per[str(size)] = tflops
        best = max(best, tflops)
    return {"sizes": per, "repeats": repeats, "best_tflops": best}


def handle(args, ctx=None):
    import torch

    args = args or {}
    device = str(args.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")).lower().split(":")[0]
    if device not in ("cpu", "cuda"):
        raise ValueError("roofs: device %r is not cpu or cuda" % device)
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("roofs: device cuda asked for, but torch %s sees no CUDA device" % torch.__version__)
    raw = str(args.get("dtype") or ("bf16" if device == "cuda" else "fp32")).lower()
    if raw not in DTYPES:
        raise ValueError("roofs: dtype %r is not one of bf16, fp16, fp32" % raw)
    dtype = DTYPES[raw]
    key, facts = identity(device, dtype, torch)
    path = cache_path(args)
    cache = _read(path)
    if not args.get("force") and isinstance(cache.get(key), dict):
        return dict(cache[key], cached=True, cache_path=path)
    d = DEFAULTS[device]
    repeats = int(args.get("repeats") or d["repeats"])
    if ctx is not None and hasattr(ctx, "progress"):
        ctx.progress("measuring the copy bandwidth", 0.1)
    copy = measure_copy(torch, device, args.get("copy_bytes") or d["copy_bytes"], repeats)
    if ctx is not None and hasattr(ctx, "progress"):
        ctx.progress("measuring matmul throughput", 0.5)
    mm = measure_matmul(torch, device, dtype, args.get("matmul_sizes") or d["matmul_sizes"], repeats)
    out = {"key": key, "device": device, "facts": facts, "dtype": SHORT[dtype],
           "bandwidth_gbs": copy["gbs"], "tflops": {SHORT[dtype]: mm["best_tflops"]},
           "copy": copy, "matmul": mm, "python": sys.executable,
           "measured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    cache = _read(path)          # another process may have added a device meanwhile
    cache[key] = out
    try:
        _write(path, cache)
    except OSError as e:
        out["cache_error"] = "not cached: %s" % e
    return dict(out, cached=False, cache_path=path)
