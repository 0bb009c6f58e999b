"""Worker op `doctor`: what this interpreter brings to a run, for `autokernel-cli doctor`.

Result: python version and path, torch (or the import error), CUDA / ROCm and the first device torch
sees, Triton (None when not installed). How the judge would isolate kernels (bubblewrap, cgroup) is
the judge's own op, `judge_facts` (agent/python/harness/facts.py): this layer does not import it.
Nothing here raises: each part that fails is reported as such.
"""

import sys


def handle(args, ctx=None):
    out = {"python": sys.version.split()[0], "executable": sys.executable}
    try:
        import torch

        out["torch"] = torch.__version__
        out["cuda"] = bool(torch.cuda.is_available())
        out["cuda_version"] = getattr(torch.version, "cuda", None)
        out["hip_version"] = getattr(torch.version, "hip", None)
        if out["cuda"]:
            out["gpu"] = torch.cuda.get_device_name(0)
            out["gpu_count"] = torch.cuda.device_count()
    except Exception as e:  # an import that fails is the finding
        out["torch_error"] = "%s: %s" % (type(e).__name__, e)
    try:
        import triton

        out["triton"] = triton.__version__
    except Exception as e:
        out["triton"] = None
        out["triton_error"] = "%s: %s" % (type(e).__name__, e)
    return out

