"""Markdown tables for docs/benchmarks.md from verification.json files (tests/bench/gpu_verify.sh
leaves them in $OUT as NAME-verification.json): the four model timings, the final set, parity and
each kernel's in-model effect. Usage: verify_table.py FILE...
"""
import json
import os
import sys


def ms(t):
    return "%.2f ms" % (t["median_us"] / 1e3) if t else "—"


def main(paths):
    rows, detail = [], []
    for p in paths:
        v = json.load(open(p))
        name = os.path.basename(p).replace("-verification.json", "")
        t = v.get("timings", {})
        par = v.get("parity", {})
        cs = v.get("compile_seconds", {})
        c, co = t.get("compile"), t.get("compile+ours")
        rows.append("| %s | %s | %s (%.2fx) | %s | %s%s | %s | %s | %.0f s (compile %.0f s) |" % (
            name, ms(t.get("eager")), ms(t.get("eager+ours")), t["eager+ours"]["speedup_vs_eager"], ms(c), ms(co),
            " (%.2fx vs compile)" % co["speedup_vs_compile"] if co and "speedup_vs_compile" in co else "",
            ", ".join(v.get("final_set") or []) or "none",
            ("ok, %d seeds" % len(par.get("seeds") or [])) if par.get("ok") else "FAILED",
            v.get("seconds", 0), sum(cs.values())))
        for k in v.get("kernels", []):
            eff = k.get("effect_pct")
            detail.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                name, k.get("kernel"), k.get("op_type"), "yes" if k.get("plugged") else "no",
                "ok" if (k.get("parity") or {}).get("ok") else "fail",
                "%+.2f %%" % eff if eff is not None else "—",
                "**final**" if k.get("in_final_set") else (k.get("why_not") or "")[:140].replace("|", "/")))
        for key in ("compile_error", "compile+ours_error"):
            if t.get(key):
                detail.append("| %s | (%s) | | | | | %s |" % (name, key, str(t[key])[:200].replace("|", "/")))
    print("| model | eager | eager + ours | compile | compile + ours | final set | parity | verify wall |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("| model | kernel | op | plugged | parity | in-model effect | final set / why not |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(detail))


if __name__ == "__main__":
    main(sys.argv[1:])
