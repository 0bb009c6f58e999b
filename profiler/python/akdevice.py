"""Worker op `device`: what torch knows about the accelerator (the fallback when NVML, the CUDA
driver and ROCm SMI could not be loaded in the GUI/CLI process).

args: index (default 0). Result: {"available": false, "reason": ...} or the device properties.
Fields torch does not expose in a given version are left out rather than guessed.
"""

import sys


def handle(args, ctx=None):
    import torch

    if not torch.cuda.is_available():
        return {"available": False, "torch": torch.__version__, "python": sys.executable,
                "reason": "torch.cuda.is_available() is False (torch %s)" % torch.__version__}
    index = int(args.get("index", 0))
    p = torch.cuda.get_device_properties(index)
    hip = getattr(torch.version, "hip", None)
    out = {
        "available": True,
        "index": index,
        "count": torch.cuda.device_count(),
        "name": p.name,
        "vendor": "amd" if hip else "nvidia",
        "sm_count": int(p.multi_processor_count),
        "total_memory_bytes": int(p.total_memory),
        "compute_capability": "%d.%d" % (p.major, p.minor),
        "torch": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "hip": hip,
    }
    arch = getattr(p, "gcnArchName", None)
    if hip and arch:
        out["compute_capability"] = arch.split(":")[0]
    for field, key in (("L2_cache_size", "l2_bytes"), ("clock_rate", "clock_khz"),
                       ("memory_clock_rate", "memory_clock_khz"), ("memory_bus_width", "memory_bus_bits")):
        value = getattr(p, field, None)
        if isinstance(value, int) and value > 0:
            out[key] = value
    return out
