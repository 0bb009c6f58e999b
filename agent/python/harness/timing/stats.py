"""Timing arithmetic shared by the judge (rounds.py) and verify: medians, the paired speedup, the
noise of a median. The clocks themselves are the judge's, in rounds.py.
"""

import math
import statistics

L2_FLUSH_BYTES = 256 * 1024 * 1024


def median(values):
    return statistics.median(values) if values else float("nan")


def noise_pct(samples, center=None):
    """Standard error of the median, percent of it: 1.2533 * 1.4826 * MAD / median / sqrt(n)."""
    n = len(samples)
    med = median(samples) if center is None else center
    if not n or not med > 0:
        return float("nan")
    mad = median([abs(x - med) for x in samples])
    return 100.0 * 1.2533 * 1.4826 * mad / med / math.sqrt(n)


def summarize(kernel_us, ref_us):
    """latency, ref latency, paired speedup, noise (standard error of the median, %) and spread."""
    n = min(len(kernel_us), len(ref_us))
    k, r = kernel_us[:n], ref_us[:n]
    med_k, med_r = median(k), median(r)
    ratios = [b / a for a, b in zip(k, r) if a > 0]
    noise = noise_pct(k, med_k)
    if n >= 4:
        q = statistics.quantiles(k, n=4)
        spread = 100.0 * (q[2] - q[0]) / med_k
    else:
        spread = 100.0 * (max(k) - min(k)) / med_k if n and med_k > 0 else float("nan")
    return {
        "latency_us": med_k,
        "ref_latency_us": med_r,
        "speedup": median(ratios),
        "noise_pct": noise,
        "spread_pct": spread,
        "samples": n,
    }
