"""What an exported package records so that its numbers can be reproduced (issue 43 item 4), and the
cold re-check of kernels a verification did not re-check (item 3).

<package>/provenance.json:
  environment   where it was measured: Python, torch, Triton, CUDA, cuDNN, the GPU, its driver, clocks
                and power limit (nvidia-smi), the CPU model, the platform
  judge         the judge's version (harness/judgeid.py: a hash of the harness's sources)
  seeds         the verification's parity seeds
  kernels       per kernel: sha256 of its source, op type, dtype, contract, and its cold re-check
                (harness/recheck.py): every paired ratio, their 10th/50th/90th percentiles, the timing
                size, dtype and seed, the kernel's and the reference's latency
  model         verify's model timings: every sample per variant (eager, eager+ours, compile, ...),
                and the paired per-round ratios of eager+ours against eager with their percentiles

`autokernel-cli reproduce DIR` (modelplug/reproduce.py) re-runs each kernel's re-check and compares;
the package's own reproduce(model, inputs) re-times the model (the package's _reproduce.py).
"""

import os
import platform
import statistics
import subprocess

FORMAT = "autokernel-provenance"
SMI_FIELDS = ("name", "driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
              "power.limit", "pstate")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _nvidia_smi(index):
    """The GPU's driver, clocks and power limit as nvidia-smi reports them; {"nvidia_smi": why} without."""
    cmd = ["nvidia-smi", "--query-gpu=" + ",".join(SMI_FIELDS), "--format=csv,noheader,nounits", "-i", str(index)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        return {"nvidia_smi": "not available: %s" % e}
    if out.returncode != 0:
        return {"nvidia_smi": "failed: %s" % (out.stderr or out.stdout).strip()[:200]}
    values = [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")]
    keys = ("gpu_smi_name", "driver", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "max_mem_clock_mhz",
            "power_limit_w", "pstate")
    return dict(zip(keys, values))


def environment(device):
    """Where the numbers were (or are being) measured; what cannot be read says why."""
    import torch
    env = {"device": device, "python": platform.python_version(), "torch": torch.__version__,
           "platform": platform.platform(), "cpu": cpu_model(), "triton": None, "gpu": None}
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception:  # noqa: BLE001 - absent on CPU machines
        pass
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            env["gpu"] = None
            env["cuda_note"] = "torch sees no CUDA device"
            return env
        index = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        env.update(gpu=props.name, gpu_memory_mib=props.total_memory // (1 << 20),
                   compute_capability="%d.%d" % (props.major, props.minor), cuda=torch.version.cuda,
                   cudnn=torch.backends.cudnn.version())
        env.update(_nvidia_smi(index))
    return env


def device_label(env):
    """The device a number belongs to, in words: the GPU's name, else the CPU's model."""
    return env.get("gpu") or env.get("cpu") or "unknown"


def percentiles(ratios):
    """{p10, median, p90} of a list of ratios (None for fewer than 2)."""
    ratios = [r for r in ratios if isinstance(r, (int, float)) and r > 0]
    if len(ratios) < 2:
        return {"p10": None, "median": ratios[0] if ratios else None, "p90": None}
    d = statistics.quantiles(ratios, n=10, method="inclusive")
    return {"p10": d[0], "median": statistics.median(ratios), "p90": d[-1]}


def model_record(v):
    """verify's model timings, every sample kept, and eager+ours' per-round ratios against eager."""
    t = v.get("timings") or {}
    out = {"variants": {k: {"median_us": x.get("median_us"), "samples_us": x.get("samples_us") or [],
                            "speedup_vs_eager": x.get("speedup_vs_eager"), "noise_pct": x.get("noise_pct")}
                        for k, x in t.items() if isinstance(x, dict) and "median_us" in x},
           "reps_per_sample": v.get("reps_per_sample"), "rounds": v.get("rounds"),
           "model_speedup": v.get("model_speedup")}
    eager = (t.get("eager") or {}).get("samples_us") or []
    ours = (t.get("eager+ours") or {}).get("samples_us") or []
    ratios = [e / o for e, o in zip(eager, ours) if o and o > 0]
    out["ratios"] = ratios
    out.update(percentiles(ratios))
    return out


def ensure_rechecked(entry, kernel_path, v, args):
    """The kernel's cold re-check: the verification's, else one run now (a verification made before
    the re-check existed). Returns the re-check record."""
    r = entry.get("recheck")
    if isinstance(r, dict) and r.get("pairs"):
        return r
    from harness import recheck
    return recheck.run({"kernel_path": kernel_path, "device": v.get("device") or "cpu", "dtype": v.get("dtype"),
                        "pairs": args.get("recheck_pairs"),
                        "allow_reduced_precision": bool(args.get("allow_reduced_precision"))})


def record(v, kernels, seeds):
    """provenance.json's object. kernels: [{kernel, file, sha256, op_type, dtype, recheck}]."""
    from harness import judgeid
    return {"format": FORMAT, "version": 1, "environment": environment(v.get("device") or "cpu"),
            "verified_on": {k: v.get(k) for k in ("device", "device_name", "dtype", "torch", "triton", "python",
                                                  "when")},
            "judge": {"version": judgeid.version(), "what": "sha256 (12 hex) of the harness's Python sources"},
            "seeds": {"parity": seeds, "recheck": {k["kernel"]: (k.get("recheck") or {}).get("seed")
                                                   for k in kernels}},
            "kernels": kernels, "model": model_record(v)}


def write(pkg, prov):
    import json
    path = os.path.join(pkg, "provenance.json")
    with open(path, "w") as f:
        json.dump(prov, f, indent=1, default=str)
    return path
