"""The cold re-check (issue 43 item 3): before verify offers a kernel or export packages it, the kernel is
measured again from nothing, paired with its baseline, and offered only if the lower tail of the paired
ratios is above 1.

"From nothing": a bench of its own (bench.run): a fresh kernel process that imports kernel.py anew (no
state of the loop's benches, no dispatch path cached by an earlier call), a fresh reference process
running the PyTorch reference on the folder's contract, every stage again. "Paired and interleaved":
each timing round times the kernel, the reference and a null kernel back to back in a rotating order,
and gives one ratio reference / kernel (net of the null); at least PAIRS rounds. The verdict is the
10th percentile of those ratios (statistics.quantiles, inclusive method): above 1 means the kernel was
faster in at least 90 % of the pairs, which a win that came from a warm cache or a lucky run rarely is.

Worker op `recheck`: args {kernel_path, device, dtype?, contract?, pairs?, allow_reduced_precision?,
time_limit_s?, seed?} -> summary() plus {"status", "failure"}.
"""

import statistics

PAIRS = 20
THRESHOLD = 1.0


def summary(ratios, threshold=THRESHOLD):
    """The distribution of paired ratios and the verdict: {pairs, p10, median, p90, min, max, ratios,
    offered, why}. Fewer than 2 ratios cannot be judged (offered False)."""
    ratios = [float(r) for r in ratios if r == r and r > 0]
    out = {"pairs": len(ratios), "ratios": [round(r, 5) for r in ratios], "threshold": threshold,
           "statistic": "10th percentile of the paired ratios (reference time / kernel time per round)"}
    if len(ratios) < 2:
        out.update(p10=None, median=None, p90=None, min=None, max=None, offered=False,
                   why="%d paired ratio%s: too few to judge" % (len(ratios), "" if len(ratios) == 1 else "s"))
        return out
    deciles = statistics.quantiles(ratios, n=10, method="inclusive")
    out.update(p10=deciles[0], median=statistics.median(ratios), p90=deciles[-1], min=min(ratios),
               max=max(ratios))
    out["offered"] = out["p10"] > threshold
    if out["offered"]:
        out["why"] = "faster in the lower tail: 10th percentile %.3fx over %d pairs" % (out["p10"], len(ratios))
    else:
        out["why"] = ("not reliably faster than PyTorch: the 10th percentile of %d paired ratios is %.3fx "
                      "(must be above %.2fx)" % (len(ratios), out["p10"], threshold))
    return out


def run(args):
    """Benches the kernel afresh with at least `pairs` timing rounds; the summary of its paired ratios."""
    from . import bench
    pairs = max(2, int(args.get("pairs") or PAIRS))
    request = {"kernel_path": args["kernel_path"], "device": args.get("device") or "cpu",
               "dtype": args.get("dtype"), "quick": False, "min_rounds": pairs,
               "allow_reduced_precision": bool(args.get("allow_reduced_precision")),
               "time_limit_s": args.get("time_limit_s") or 180}
    for key in ("contract", "seed", "kernel_source_b64", "peaks"):
        if args.get(key) is not None:
            request[key] = args[key]
    result = bench.run(request)
    if result.get("status") != "ok":
        out = summary([])
        out.update(status=result.get("status"), failure=result.get("failure", ""), offered=False,
                   why="the re-check's bench did not pass: %s" % result.get("failure", result.get("status")))
        return out
    out = summary((result.get("timing") or {}).get("pair_ratios") or [])
    out.update(status="ok", failure="", latency_us=result.get("latency_us"),
               ref_latency_us=result.get("ref_latency_us"), noise_pct=result.get("noise_pct"),
               timing_size=result.get("timing_size"), dtype=result.get("dtype"), seed=result.get("seed"),
               judge=result.get("judge"), contract=result.get("contract"), device=result.get("device"))
    return out


def handle(args, ctx=None):
    return run(args or {})
