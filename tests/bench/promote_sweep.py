#!/usr/bin/env python3
"""Pick each op's winner from a starter_sweep.json and write it as a starter file (GPU machine step).

For each op asked, the fastest correct configuration of the candidate (starter_sweep.py's rows
whose candidate is a JSON object of constants) is set as the candidate file's own constants
(module-level `NAME = value` lines rewritten; comments and the rest of the file untouched) and written
to OUT_DIR/<op>.py, but only when it beats the shipped starter ("old starter" row) by more than
--margin (default 1 %): a win inside do_bench's noise is not a reason to change what users get.
The written files are what harness_gpu_bench.py --starters then runs through the full harness, and
what a later commit copies into agent/python/harness/starters/triton/ unchanged.

    python3 tests/bench/promote_sweep.py --sweep OUT/starter_sweep.json --ops rmsnorm,layernorm \
        --candidates tests/bench/starter_candidates/triton --out OUT/promoted/triton

Prints one line per op (promoted or not, and why) and the promoted op names last, comma-separated.
"""

import argparse
import ast
import json
import os
import re
import sys


def rewrite(text, config):
    # The constants' own lines, found by the parser (a docstring that mentions NAME=1 is not one).
    lines = text.splitlines(keepends=True)
    where = {}
    for node in ast.parse(text).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.lineno == node.end_lineno):
            where[node.targets[0].id] = node.lineno - 1
    for name, value in config.items():
        if name not in where:
            raise ValueError("no module-level constant %s to set" % name)
        i = where[name]
        lines[i] = re.sub(r"^(%s\s*=\s*)([^#\n]*?)(\s*(#.*)?)$" % re.escape(name),
                          lambda m, v=value: m.group(1) + repr(v) + m.group(3), lines[i].rstrip("\n")) + "\n"
    return "".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--ops", required=True)
    ap.add_argument("--candidates", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "starter_candidates", "triton"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--margin", type=float, default=0.01)
    a = ap.parse_args()
    with open(a.sweep) as f:
        rows = json.load(f)["rows"]
    promoted = []
    for op in filter(None, a.ops.split(",")):
        mine = [r for r in rows if r["op"] == op and "us" in r and "failure" not in r]
        shipped = [r["us"] for r in mine if r["candidate"] == "old starter"]
        configs = [(r["us"], json.loads(r["candidate"])) for r in mine if r["candidate"].startswith("{")]
        if not shipped or not configs:
            print("%s: nothing to compare (shipped %d, configurations %d)" % (op, len(shipped), len(configs)))
            continue
        us, config = min(configs, key=lambda t: t[0])
        gain = shipped[0] / us
        if gain <= 1.0 + a.margin:
            print("%s: kept the shipped starter (best candidate %s at %.1f us, %.3fx)" % (op, config, us, gain))
            continue
        with open(os.path.join(a.candidates, op + ".py")) as f:
            text = rewrite(f.read(), config)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, op + ".py"), "w") as f:
            f.write(text)
        promoted.append(op)
        print("%s: promoted %s (%.1f us, %.3fx the shipped starter)" % (op, config, us, gain))
    print(",".join(promoted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
