"""Worker op `judge_facts`: how the judge on this machine would isolate a candidate kernel, for
`autokernel-cli doctor`: the bubblewrap it sandboxes with ("bwrap", "bwrap_why") and the cgroup it
contains a kernel's processes with ("cgroup", "cgroup_level", "cgroup_text": the line doctor shows;
without a writable cgroup a warning that the judge is weaker).

The judge's own op, beside the interpreter's facts (profiler/python/akdoctor.py): the profiler layer
does not reach into the judge. Nothing here raises: each part that fails is reported as such.
"""


def handle(args=None, ctx=None):
    out = {}
    try:
        from .isolation.sandbox import find_bwrap

        out["bwrap"], out["bwrap_why"] = find_bwrap()
    except Exception as e:  # noqa: BLE001 - a failure is the finding
        out["bwrap"], out["bwrap_why"] = None, "%s: %s" % (type(e).__name__, e)
    out.update(cgroup_facts())
    return out


def cgroup_facts():
    """cgroup: 'v2' | 'v1' | 'v2+v1' | None; cgroup_level: ok | warning; cgroup_text: the line to show."""
    try:
        from .isolation import cgroup

        facts = cgroup.describe()
        if facts["cgroup"]:
            limits = [name for name, on in (("memory, shared memory counted", facts["memory"]),
                                            ("task count", facts["pids"])) if on]
            text = "%s: every process a kernel starts is frozen and killed with it; limits: %s" % (
                facts["cgroup"], ", ".join(limits) or "none (only the address-space limit)")
            return {"cgroup": facts["cgroup"], "cgroup_level": "ok", "cgroup_text": text}
        return {"cgroup": None, "cgroup_level": "warning",
                "cgroup_text": "%s [%s]" % (cgroup.WARNING, facts["why"])}
    except Exception as e:  # noqa: BLE001
        return {"cgroup": None, "cgroup_level": "warning", "cgroup_text": "%s: %s" % (type(e).__name__, e)}
