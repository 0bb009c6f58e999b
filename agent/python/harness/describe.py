"""The `describe` worker op and `python3 -m harness.describe`: every op type's contract as JSON
(arguments, tolerances per dtype, test sizes, headline size, FLOP/byte formulas), the stages, the
anti-cheat checks and the keep rule. Imports no torch."""

import json
import os
import sys

from . import ops
from .timing import roofline
from .contract import rules

STARTERS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "starters")


def describe():
    op_table = {}
    for name, spec in ops.OPS.items():
        entry = spec.describe()
        entry["starters"] = {kind: "starters/%s/%s.py" % (kind, name) for kind in ("cpu", "triton")
                             if os.path.exists(os.path.join(STARTERS_DIR, kind, name + ".py"))}
        op_table[name] = entry
    return {
        "version": 1,
        "contract": {
            "required": ["KERNEL_TYPE", "kernel_fn"],
            "optional_overrides": ["TEST_SIZES", "TOLERANCES", "TEST_DTYPES", "CONTRACT"],
            "overrides_are_literals": True,
            "attributes": ("CONTRACT = {...}: the op's contract attributes (each op's attrs: defaults, "
                           "attr_values: allowed values; docs/contracts.md). Written by extract; the "
                           "bench's args.contract (the folder's) is authoritative and must match it"),
            "tolerance_loosen_limit": rules.TOLERANCE_LOOSEN_LIMIT,
            "tunables": "UPPER_CASE module-level int/float literals; candidates in TUNE_SPACE",
        },
        "default_dtypes": rules.DEFAULT_DTYPES,
        "tolerance_rule": ("|out - truth| <= atol * max(1, rms(truth)) + (rtol + eps(dtype)) * |truth|, "
                           "truth = reference in fp64 (fp32 tests) or fp32 (fp16/bf16 tests)"),
        "stages": [{"name": s, "what": rules.STAGE_TEXT[s]} for s in rules.ALL_STAGES],
        "anti_cheat": [{"cheat": c, "defence": d} for c, d in rules.ANTI_CHEAT],
        "timing": {
            "cuda": "triton.testing.do_bench median, L2 flushed (256 MB write) before every rep, "
                    "kernel and reference alternated per round, speedup = median of paired ratios",
            "cpu": "median of perf_counter_ns per call after warm-up, kernel and reference alternated",
            "noise_pct": "standard error of the median latency, percent (1.2533 * 1.4826 * MAD / "
                         "median / sqrt(n))",
            "suspicious_speedup": roofline.SUSPICIOUS_SPEEDUP,
        },
        "keep_rule": {"min_improvement_pct": roofline.KEEP_MIN_IMPROVEMENT_PCT,
                      "text": roofline.KEEP_RULE_TEXT},
        "ops": op_table,
    }


def handle(args=None, ctx=None):
    return describe()


def main():
    json.dump(describe(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
