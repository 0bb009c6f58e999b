#!/usr/bin/env bash
# On the GPU machine (#38 [fidelity]): the real models a new user tries (timm's ViT-B/16, transformers'
# Llama: tests/bench/models/), profiled with the bundled CLI, then verified with each folder's head
# (the starters when BUDGET is 0): how many folders plug at every site, which the plug-check refused
# and why, parity, and eager + ours against eager in the model. Everything lands in one archive,
# $OUT/fidelity_gpu.tar.gz, and a summary, $OUT/fidelity_gpu.md (the device returns few files).
# Usage: tests/bench/fidelity_gpu.sh [BUDGET] [MODELS...]   (needs .devcarry/autokernel-cli.tar.xz)
set -uo pipefail
budget=${1:-0}; shift || true
models=${*:-tests/bench/models/timm_vit.py tests/bench/models/hf_llama.py}
out=${OUT:-/tmp/out}; work=/tmp/fidelity; rm -rf "$work"; mkdir -p "$work" "$out"
summary=$out/fidelity_gpu.md
{ echo "# fidelity_gpu $(date -u +%FT%TZ) budget $budget"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$summary"
# The tune's budget on top of profile + verify + export (280 s was enough for those alone).
case $budget in 0) extra=0 ;; *m) extra=$(( ${budget%m} * 60 )) ;; *s) extra=${budget%s} ;; *) extra=600 ;; esac
for m in $models; do
  name=$(basename "$m" .py)
  OUT=$work/$name AK_STEPS="prep check" timeout $((280 + extra)) bash tests/bench/gpu_verify.sh "$m" "$budget" 10 --no-compile --seeds 1 --rounds 5
  st=$work/$name/$name-status.json; ver=$work/$name/$name-verification.json
  python3 - "$name" "$st" "$ver" >> "$summary" 2>&1 <<'PY'
import json, sys
name, st, ver = sys.argv[1:4]
print("\n## %s\n" % name)
try:
    s = json.load(open(st))
except Exception as e:
    print("no status: %s" % e); sys.exit(0)
print("| folder | op | contract | state | reason |\n|---|---|---|---|---|")
for k in s.get("kernels", []):
    c = k.get("contract", {})
    print("| %s | %s | %s %s | %s | %s |" % (k["folder"].split("/")[-1], k["op_type"], c.get("callable", ""),
          json.dumps(c.get("attrs", {})), k["state"], (c.get("refused") or "")[:160]))
try:
    v = json.load(open(ver))
except Exception as e:
    print("\nno verification: %s" % e); sys.exit(0)
t = v.get("timings", {})
print("\ntimings (ms): %s" % json.dumps({k: t[k] for k in t if not isinstance(t[k], (list, dict))}))
for key in ("speedup", "speedup_eager", "final_set", "summary"):
    if key in v:
        print("%s: %s" % (key, json.dumps(v[key])[:400]))
for k in v.get("kernels", []):
    print("- %s" % json.dumps({x: k.get(x) for x in ("kernel", "parity", "plugged_sites", "unplugged_sites",
          "routed_calls", "fallback_calls", "effect_pct", "in_final_set", "dropped", "reason") if x in k})[:600])
PY
done
tar -C "$work" -czf "$out/fidelity_gpu.tar.gz" . 2>/dev/null
cat "$summary"
