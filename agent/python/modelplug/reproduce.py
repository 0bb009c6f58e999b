"""The `reproduce` worker op (autokernel-cli reproduce DIR, issue 43 item 4): re-runs an exported
package's measurement on this machine and compares it with what the package recorded.

args {dir: the export directory (or the package inside it), pairs?} -> {package, kernels: [...], agree,
environment: {recorded, here, differs: [...]}, judge: {recorded, here}, lines: [...]}

Per kernel: its file's sha256 against the recorded one (a changed file is not the kernel that was
measured), then its cold re-check again (harness/recheck.py: a fresh bench, paired rounds against
PyTorch on the recorded contract, dtype and device). Agreement: the new median paired ratio lies within
the recorded spread (10th to 90th percentile of the ratios at export). Differences of device, driver,
torch, Triton or the judge's version are listed; on another device a difference is reported with both
numbers, not as a broken package.
"""

import hashlib
import json
import os

from modelplug import provenance

COMPARED = ("gpu", "cpu", "driver", "cuda", "torch", "triton", "sm_clock_mhz", "power_limit_w")


class ReproduceError(Exception):
    pass


def find_package(path):
    """The package directory holding provenance.json: `path` itself or one directory below it."""
    if os.path.isfile(os.path.join(path, "provenance.json")):
        return path
    found = [os.path.join(path, d) for d in sorted(os.listdir(path)) if os.path.isfile(os.path.join(path, d, "provenance.json"))] \
        if os.path.isdir(path) else []
    if len(found) != 1:
        raise ReproduceError("%s holds %s package with provenance.json (export writes one: autokernel-cli export)"
                             % (path, "no" if not found else "more than one"))
    return found[0]


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def compare(recorded, ratios_summary):
    """(agree, text) of a new re-check against the recorded one."""
    lo, hi, med = recorded.get("p10"), recorded.get("p90"), ratios_summary.get("median")
    if med is None:
        return False, "no paired ratio measured: %s" % ratios_summary.get("why", "")
    if lo is None or hi is None:
        return False, "median %.3fx; nothing recorded to compare with" % med
    if lo <= med <= hi:
        return True, "agrees: median %.3fx within the recorded %.3fx-%.3fx" % (med, lo, hi)
    return False, ("differs: median %.3fx, recorded %.3fx (10th-90th percentile %.3fx-%.3fx)"
                   % (med, recorded.get("median") or float("nan"), lo, hi))


def handle(args, ctx=None):
    from harness import judgeid, recheck
    pkg = find_package(os.path.abspath(args["dir"]))
    with open(os.path.join(pkg, "provenance.json")) as f:
        prov = json.load(f)
    if prov.get("format") != provenance.FORMAT:
        raise ReproduceError("%s/provenance.json is not an AutoKernel provenance record" % pkg)
    was = prov.get("environment") or {}
    device = was.get("device") or "cpu"
    here = provenance.environment(device)
    differs = ["%s: recorded %s, here %s" % (k, was.get(k), here.get(k)) for k in COMPARED
               if k in was and was.get(k) != here.get(k)]
    judge = {"recorded": (prov.get("judge") or {}).get("version"), "here": judgeid.version()}
    if judge["recorded"] != judge["here"]:
        differs.append("judge: recorded %s, here %s (the harness changed)" % (judge["recorded"], judge["here"]))
    same_device = provenance.device_label(was) == provenance.device_label(here)
    lines = ["device: recorded %s, here %s%s" % (provenance.device_label(was), provenance.device_label(here),
                                                  "" if same_device else " (another device: differences are expected)")]
    results, agree = [], True
    for i, k in enumerate(prov.get("kernels") or []):
        if ctx is not None:
            ctx.progress("re-checking %s" % k["kernel"], i / max(1, len(prov["kernels"])))
        path = os.path.join(pkg, "kernels", k["file"])
        entry = {"kernel": k["kernel"], "recorded": {x: (k.get("recheck") or {}).get(x) for x in ("p10", "median", "p90", "pairs")}}
        if not os.path.isfile(path) or _sha(path) != k.get("sha256"):
            entry.update(agree=False, text="%s is missing or changed since export (sha256 differs): not the kernel "
                                           "that was measured" % path)
        else:
            contract = k.get("contract")
            r = recheck.run({"kernel_path": path, "device": device, "dtype": k.get("dtype"),
                             "contract": {"attrs": contract} if isinstance(contract, dict) else None,
                             "pairs": args.get("pairs") or (k.get("recheck") or {}).get("pairs")})
            entry["measured"] = {x: r.get(x) for x in ("p10", "median", "p90", "pairs", "latency_us", "ref_latency_us")}
            entry["measured"]["ratios"] = r.get("ratios")
            entry["agree"], entry["text"] = compare(k.get("recheck") or {}, r)
        agree = agree and entry["agree"]
        results.append(entry)
        lines.append("%s: %s" % (k["kernel"], entry["text"]))
    if not results:
        lines.append("the package holds no kernel: nothing to re-measure")
    lines += ["differs: " + d for d in differs]
    return {"package": pkg, "kernels": results, "agree": agree, "same_device": same_device,
            "environment": {"recorded": was, "here": here, "differs": differs}, "judge": judge, "lines": lines}
