"""Worker op `doctor`: what this interpreter brings to a run, for `autokernel-cli doctor`.

Result: python version and path, torch (or the import error), CUDA / ROCm and the first device torch
sees, Triton (None when not installed), the bubblewrap the harness would sandbox kernels with, and
the cgroup it would contain their processes with ("cgroup", "cgroup_level", "cgroup_text": the line
`doctor` shows; without a writable cgroup a warning that the judge is weaker).
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
    try:
        from harness.sandbox import find_bwrap

        path, why = find_bwrap()
        out["bwrap"] = path
        out["bwrap_why"] = why
    except Exception as e:
        out["bwrap"] = None
        out["bwrap_why"] = "%s: %s" % (type(e).__name__, e)
    out.update(cgroup_facts())
    return out


def cgroup_facts():
    """The "cgroup" line: how the judge contains a kernel's processes (harness/cgroup.py).
    cgroup: 'v2' | 'v1' | 'v2+v1' | None; cgroup_level: ok | warning; cgroup_text: the line to show."""
    try:
        from harness import cgroup

        facts = cgroup.describe()
        if facts["cgroup"]:
            limits = [name for name, on in (("memory, shared memory counted", facts["memory"]),
                                            ("task count", facts["pids"])) if on]
            text = "%s: every process a kernel starts is frozen and killed with it; limits: %s" % (
                facts["cgroup"], ", ".join(limits) or "none (only the address-space limit)")
            return {"cgroup": facts["cgroup"], "cgroup_level": "ok", "cgroup_text": text}
        return {"cgroup": None, "cgroup_level": "warning",
                "cgroup_text": "%s [%s]" % (cgroup.WARNING, facts["why"])}
    except Exception as e:
        return {"cgroup": None, "cgroup_level": "warning", "cgroup_text": "%s: %s" % (type(e).__name__, e)}
