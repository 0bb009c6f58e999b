"""Roofline numbers, the physical-peak plausibility check and the keep decision."""

from ..contract.dtypes import SHORT, canonical, element_size

KEEP_MIN_IMPROVEMENT_PCT = 1.0
KEEP_RULE_TEXT = ("keep a candidate only if (best_latency - candidate_latency) / best_latency * 100 "
                  "> max(1.0, noise_pct): it must beat the best by more than 1% and by more than "
                  "the measured noise")
SUSPICIOUS_SPEEDUP = 10.0
PEAK_MARGIN = 1.05      # measurement slack before a rate counts as above the physical peak


def _peak_tflops(peaks, dtype):
    table = (peaks or {}).get("tflops") or {}
    short = SHORT[canonical(dtype)]
    value = table.get(short, table.get(canonical(dtype), 0)) or 0
    return float(value)


def _bandwidth(peaks):
    return float((peaks or {}).get("bandwidth_gbs") or 0)


def _position(m, peak_t, bw):
    """(bound, % of the bounding roof, ridge) of a measured rate against one pair of roofs; 0 = unknown."""
    if peak_t > 0 and bw > 0:
        ridge = peak_t * 1e12 / (bw * 1e9)
        if m["arithmetic_intensity"] < ridge:
            return "memory", 100.0 * m["gbps"] / bw, ridge
        return "compute", 100.0 * m["tflops"] / peak_t, ridge
    if bw > 0:
        return "memory", 100.0 * m["gbps"] / bw, None
    if peak_t > 0:
        return "compute", 100.0 * m["tflops"] / peak_t, None
    return "", float("nan"), None


def roofs(peaks, dtype):
    """The roofs % of roof is taken against: what the device measured doing (peaks["measured"]: a copy's
    GB/s, the best matmul's TFLOP/s at this dtype; see profiler/python/akroofs.py) where known, the
    spec sheet's otherwise. Returns (tflops, gbs, source): source "measured", "spec" or "measured
    bandwidth, spec compute" (one of the two was measured)."""
    measured = (peaks or {}).get("measured") or {}
    spec_t, spec_bw = _peak_tflops(peaks, dtype), _bandwidth(peaks)
    m_t, m_bw = _peak_tflops(measured, dtype), _bandwidth(measured)
    t, bw = m_t or spec_t, m_bw or spec_bw
    if m_t and m_bw:
        source = "measured"
    elif m_bw and spec_t:
        source = "measured bandwidth, spec compute"
    elif m_t and spec_bw:
        source = "measured compute, spec bandwidth"
    elif m_t or m_bw:
        source = "measured"
    else:
        source = "spec"
    return t, bw, source


def metrics(spec, size, dtype, latency_us, peaks):
    """Rates and roofline position. pct_peak is against the measured roofs (roofs()), pct_peak_spec
    against the spec sheet's, side by side; roof says which roofs pct_peak used. The bound is decided
    at the ridge of the roofs pct_peak uses."""
    flops = spec.flops(size)
    nbytes = spec.bytes(size, element_size(dtype))
    seconds = latency_us * 1e-6
    out = {
        "flops": flops,
        "bytes": nbytes,
        "tflops": flops / seconds / 1e12 if seconds > 0 else float("nan"),
        "gbps": nbytes / seconds / 1e9 if seconds > 0 else float("nan"),
        "arithmetic_intensity": flops / nbytes if nbytes else float("nan"),
    }
    peak_t, bw, source = roofs(peaks, dtype)
    out["bound"], out["pct_peak"], ridge = _position(out, peak_t, bw)
    out["roof"] = source if out["bound"] else ""
    if ridge is not None:
        out["ridge_flops_per_byte"] = ridge
    spec_bound, spec_pct, _ = _position(out, _peak_tflops(peaks, dtype), _bandwidth(peaks))
    out["pct_peak_spec"] = spec_pct
    out["bound_spec"] = spec_bound
    return out


def suspicious(speedup):
    """A flag (not a rejection) for speedups large enough to deserve a human look."""
    if speedup == speedup and speedup > SUSPICIOUS_SPEEDUP:
        return ("speedup %.1fx over the PyTorch reference is above %gx: verify by hand"
                % (speedup, SUSPICIOUS_SPEEDUP))
    return None


def beyond_copy_roof(m, copy_gbs, margin=1.5):
    """A flag (held for review, not rejected) when a CPU kernel moves its minimum bytes faster than a
    copy of a working set of the same size: caches make the CPU's roof a measured one, not a number."""
    if copy_gbs and copy_gbs > 0 and m["gbps"] == m["gbps"] and m["gbps"] > copy_gbs * margin:
        return ("%.3g GB/s is beyond the CPU's measured copy rate of %.3g GB/s for this working set: "
                "verify by hand" % (m["gbps"], copy_gbs))
    return None


def impossible(m, dtype, peaks, cold_cache):
    """Reason string when the measured rate exceeds what the device can physically do."""
    limit_t = _peak_tflops(peaks, dtype)
    if canonical(dtype) == "float32":
        # fp32 inputs may legitimately run on TF32 tensor cores (e.g. 3xTF32 tricks).
        limit_t = max(limit_t, float(((peaks or {}).get("tflops") or {}).get("tf32", 0) or 0))
    if limit_t > 0 and m["tflops"] > limit_t * PEAK_MARGIN:
        return ("measured %.4g TFLOP/s exceeds the device's physical %s peak of %.4g TFLOP/s: the "
                "timing cannot be real (work skipped or done outside the timed call)"
                % (m["tflops"], SHORT[canonical(dtype)], limit_t))
    bw = _bandwidth(peaks)
    if cold_cache and bw > 0 and m["gbps"] > bw * PEAK_MARGIN:
        return ("measured %.4g GB/s exceeds the device's DRAM bandwidth of %.4g GB/s with a cold L2: "
                "the timing cannot be real" % (m["gbps"], bw))
    return None


def keep_decision(best_latency_us, candidate_latency_us, noise_pct=0.0):
    """The loop's keep rule (same as core/keeprule.h): more than 1% and more than the noise."""
    threshold = max(KEEP_MIN_IMPROVEMENT_PCT, float(noise_pct or 0.0))
    if not (best_latency_us and best_latency_us > 0) or candidate_latency_us is None:
        return {"keep": False, "improvement_pct": float("nan"), "threshold_pct": threshold,
                "reason": "no latency to compare"}
    improvement = 100.0 * (best_latency_us - candidate_latency_us) / best_latency_us
    keep = improvement > threshold
    return {"keep": keep, "improvement_pct": improvement, "threshold_pct": threshold,
            "reason": ("%.2f%% faster, above the %.2f%% threshold" if keep else
                       "%.2f%% faster, not above the %.2f%% threshold") % (improvement, threshold)}
